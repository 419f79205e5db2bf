"""A kill (the hard stop: a second SIGTERM, or a bee past its shutdown) reaches a turn
from the moment its process exists, also while the bee still writes its row (the turn's
process is then its gate: the agent itself runs only once the row is written)."""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path

import psycopg

from hive.actors.bee.actor import BeeActor
from hive.actors.bee.bee import Bee
from hive.actors.bee.order import BeeOrder
from hive.actors.bee.start import plan_of
from hive.agents.command import GATE_NAME
from hive.git.worktrees import worktree_path
from hive.runtime import bee_ports
from hive.store import orders, pool
from hive.swarm import pid_alive
from tests.live.runtime.conftest import eventually, queue

# the agent says it ran, then sleeps: only a kill ends it early
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


def gate_in(worktree: Path) -> int | None:
    """The pid of a turn's gate (its process before `begin`) running in `worktree`."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            if GATE_NAME.encode() in argv and (entry / "cwd").resolve() == worktree.resolve():
                return int(entry.name)
    return None


def test_a_kill_while_the_bee_writes_its_row_reaches_the_turn(make_runtime, hive_db_url):
    rt = make_runtime(AGENT=TURN)
    queue(rt, 13)
    claimed = orders.claim(rt.db, rt.settings.runner_name)
    assert claimed is not None
    plan = plan_of(
        rt.bee.start, issue=13, title="t", body="", base="main", base_sha=None,
        boundary=("src/app.py",), brief="", key="",
    )  # fmt: skip
    bee = Bee(bee_ports(rt), BeeOrder(claimed.fence, plan), rt.bee)
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
            worktree = worktree_path(rt.checkout.workdir, 13)
            turn_pid = eventually(lambda: gate_in(worktree), EVENT_SECONDS)
            # the turn's process exists, its row is not written
            eventually(lambda: ledger_waits(hive_db_url), EVENT_SECONDS)
            actor.on_kill()  # what the supervisor's kill does, in its own thread
            eventually(lambda: not pid_alive(turn_pid), EVENT_SECONDS)
            raise psycopg.Rollback(tx)
        assert bee.wait(EVENT_SECONDS)  # the killed turn still ends its order
        assert not pid_file.exists(), "the agent ran before its row was written"
    finally:  # a failure leaves no turn (a 600 s sleep) and no actor behind
        if turn_pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(turn_pid, signal.SIGKILL)
        if ref is not None:
            ref.stop(timeout=EVENT_SECONDS)
