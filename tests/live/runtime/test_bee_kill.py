"""A kill (the hard stop: a second SIGTERM, or a bee past its shutdown) reaches a turn
from the moment its process exists, also while the bee still writes its row."""

from __future__ import annotations

import contextlib
import os
import signal

import psycopg

from hive.actors.bee import Bee, BeeOrder
from hive.actors.bee_actor import BeeActor
from hive.actors.start import plan_of
from hive.store import orders, pool
from hive.swarm import pid_alive
from tests.live.runtime.conftest import eventually, queue

# the turn says who it is, then sleeps: only a kill ends it early
TURN = "command:echo $$ > ../turn-$HIVE_ISSUE.pid; exec sleep 600"
# a deadline for an event (each wait returns as soon as it holds), long enough for a
# loaded machine
EVENT_SECONDS = 60.0


def ledger_waits(url: str) -> bool:
    """Whether the bee's ledger (the UPDATE that resets dispatched_at) waits on the lock."""
    with pool.connect(url) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
            " AND wait_event_type = 'Lock' AND query LIKE '%%SET dispatched_at = now()%%'"
        ).fetchone()
    return row is not None and row[0] == 1


def test_a_kill_while_the_bee_writes_its_row_reaches_the_turn(make_runtime, hive_db_url):
    rt = make_runtime(AGENT=TURN)
    queue(rt, 13)
    claimed = orders.claim(rt.db, rt.settings.runner_name)
    assert claimed is not None
    plan = plan_of(
        rt.bee.start, issue=13, title="t", body="", base="main", base_sha=None,
        boundary=("src/app.py",), brief="", key="",
    )  # fmt: skip

    def ledger() -> bool:
        return orders.mark_started(rt.db, claimed.fence)

    bee = Bee(rt, BeeOrder(claimed.fence, plan, ledger), rt.bee)
    pid_file = rt.checkout.workdir / "turn-13.pid"
    turn_pid: int | None = None
    ref = None
    try:
        # the row is locked: the bee's ledger (reset dispatched_at) waits behind it
        with pool.connect(hive_db_url) as locker, locker.transaction() as tx:
            locker.execute("SELECT 1 FROM hive.queen_dispatch WHERE issue = 13 FOR UPDATE")
            ref = BeeActor.start(bee)
            actor = BeeActor.of(ref)
            assert isinstance(actor, BeeActor)
            eventually(lambda: pid_file.exists() and pid_file.read_text().strip(), EVENT_SECONDS)
            turn_pid = int(pid_file.read_text())
            # the turn runs, its row is not written
            eventually(lambda: ledger_waits(hive_db_url), EVENT_SECONDS)
            actor.on_kill()  # what the supervisor's kill does, in its own thread
            eventually(lambda: not pid_alive(turn_pid), EVENT_SECONDS)
            raise psycopg.Rollback(tx)
        assert bee.wait(EVENT_SECONDS)  # the killed turn still ends its order
    finally:  # a failure leaves no turn (a 600 s sleep) and no actor behind
        if turn_pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(turn_pid, signal.SIGKILL)
        if ref is not None:
            ref.stop(timeout=EVENT_SECONDS)
