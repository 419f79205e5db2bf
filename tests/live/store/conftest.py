from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import psycopg
import pytest

from hive.store import orders, pool
from hive.store.orders import NewOrder


@pytest.fixture
def conn(hive_db_url: str) -> Iterator[psycopg.Connection[Any]]:
    with pool.connect(hive_db_url) as c:
        yield c


def queue(conn: psycopg.Connection[Any], issue: int, **fields: Any) -> orders.Order:
    """A queued order for `issue` (elsewhere mode), as the Queen writes it."""
    made = orders.insert(conn, NewOrder(issue, f"queen-{issue}", "main", **fields), queued=True)
    assert made is not None
    return made


def local(conn: psycopg.Connection[Any], issue: int) -> orders.Order:
    """An order the Queen runs herself (queued_at NULL)."""
    made = orders.insert(conn, NewOrder(issue, f"queen-{issue}", "main"), queued=False)
    assert made is not None
    return made


def backdate(conn: psycopg.Connection[Any], issue: int, column: str, minutes: float) -> None:
    """Move one of the order's clocks `minutes` into the past (the test's clock)."""
    assert column in ("claimed_at", "dispatched_at")
    statements = {
        "claimed_at": "UPDATE hive.queen_dispatch SET claimed_at = claimed_at"
        " - make_interval(secs => %s) WHERE issue = %s",
        "dispatched_at": "UPDATE hive.queen_dispatch SET dispatched_at = dispatched_at"
        " - make_interval(secs => %s) WHERE issue = %s",
    }
    conn.execute(statements[column], (minutes * 60.0, issue))


@contextmanager
def running(procs: Sequence[Any]) -> Iterator[Sequence[Any]]:
    """Start the processes; whatever happens, none outlives the test (a failed assertion
    must not leave a worker waiting on a barrier forever)."""
    for p in procs:
        p.start()
    try:
        yield procs
    finally:
        for p in procs:
            if p.is_alive():
                p.terminate()
            p.join(5)
