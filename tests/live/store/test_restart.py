"""A server restart in the middle of a run, on a private embedded server (never the
session's)."""

import shutil
import tempfile
import time
from pathlib import Path

import pytest

from hive.store import embedded, migrate, orders, pool
from hive.store.listen import Listener, Reason
from hive.store.orders import NewOrder
from hive.store.sql import q

from . import workers
from .conftest import Child, finish, running

RUNNERS = 2
BEFORE, AFTER = 1000, 100
# the runners sleep on LISTEN; this long a poll means only a NOTIFY or a reconnect wakes them
POLL_SECONDS = 30.0
DEADLINE_SECONDS = 60.0
# between two looks at the table while waiting for the runners (spares the 2 cores)
POLL_PAUSE_SECONDS = 0.02


@pytest.fixture(scope="module")
def _server():
    base = Path(tempfile.mkdtemp(prefix="hive-restart-", dir="/tmp"))
    pgdata = base / "pg"
    url = embedded.start(pgdata)
    migrate.apply(url)
    try:
        yield pgdata, url
    finally:
        embedded.stop(pgdata)
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def private_server(_server):
    """A server of this module's own, running, with empty order tables."""
    pgdata, url = _server
    url = embedded.start(pgdata)
    with pool.connect(url) as conn:
        conn.execute(q("bench_clear_orders"))
    return pgdata, url


def _restart(pgdata: Path) -> str:
    assert embedded.stop(pgdata)
    return embedded.start(pgdata)


def _until(condition, what: str) -> None:
    deadline = time.monotonic() + DEADLINE_SECONDS
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(POLL_PAUSE_SECONDS)  # a polling interval, not a synchronisation


def _queue(url: str, issues: range) -> None:
    with pool.connect(url) as conn, conn.transaction():
        for issue in issues:
            orders.insert(conn, NewOrder(issue, f"queen-{issue}", "main"), queued=True)


def _listing(url: str) -> list[orders.Order]:
    with pool.connect(url) as conn:
        return orders.listing(conn)


def _finished(url: str) -> int:
    with pool.connect(url) as conn:
        return sum(1 for o in orders.listing(conn) if o.finished_at is not None)


def test_a_restart_costs_a_pool_caller_no_failed_call_and_the_listener_hears_again(
    private_server,
):
    pgdata, url = private_server
    with pool.make_pool(url, min_size=2, max_size=2) as db, Listener(url) as listener:
        assert orders.listing(db) == []
        assert _restart(pgdata) == url
        assert orders.listing(db) == []  # the first call after the restart just works
        assert listener.wait(DEADLINE_SECONDS).reason == Reason.RECONNECTED
        assert listener.reconnects == 1
        _queue(url, range(1, 2))
        assert listener.wait(DEADLINE_SECONDS).payloads == ("1",)


def test_a_restart_costs_a_held_connection_no_failed_call(private_server):
    pgdata, url = private_server
    with pool.HeldConnection(url) as held:
        assert orders.claim(held, "r1") is None
        _restart(pgdata)
        assert orders.claim(held, "r1") is None  # reconnected inside, not raised
        assert held.reconnects == 1


def test_a_restart_in_the_middle_of_a_run_loses_no_row_and_the_runners_carry_on(
    private_server,
):
    pgdata, url = private_server
    children = [
        Child(workers.runner, url, f"r{i}", POLL_SECONDS, name=f"r{i}") for i in range(RUNNERS)
    ]
    with running(children):
        for child in children:
            assert child.receive(DEADLINE_SECONDS) == workers.READY
        _queue(url, range(1, BEFORE + 1))
        _until(lambda: _finished(url) >= BEFORE // 10, "the runners to get going")
        with pool.connect(url) as conn:
            restarted_at = conn.execute("SELECT now()").fetchone()[0]
        _restart(pgdata)
        _queue(url, range(BEFORE + 1, BEFORE + AFTER + 1))
        _until(
            lambda: all(o.finished_at is not None for o in _listing(url) if o.issue > BEFORE),
            "the orders queued after the restart",
        )
        for child in children:
            child.send(workers.STOP)
        with pool.connect(url) as conn:  # wake the sleeping runners so they see the stop
            conn.execute("SELECT pg_notify('hive_orders', 'stop')")
        reports = [child.receive(DEADLINE_SECONDS) for child in children]
        finish(children, DEADLINE_SECONDS)
    ended = [issue for mine, _ in reports for issue in mine]
    failed = sum(f for _, f in reports)
    with pool.connect(url) as conn:
        rows = orders.listing(conn)
    assert [o.issue for o in rows] == list(range(1, BEFORE + AFTER + 1))  # no row lost
    assert len(ended) == len(set(ended))  # none ended twice
    # a call cut by the restart may have landed without its answer: it strands at most
    # the one row it touched (the silent-runner reaper frees it), never more
    unfinished = [o.issue for o in rows if o.finished_at is None]
    assert len(unfinished) <= failed
    assert len(ended) >= BEFORE + AFTER - failed
    # the restart came in the middle of the first batch, and the runners carried it on
    assert any(o.issue <= BEFORE and o.finished_at > restarted_at for o in rows if o.finished_at)
