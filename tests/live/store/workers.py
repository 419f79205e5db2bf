"""Runner processes for the live tests (spawned, so kept free of pytest imports)."""

from __future__ import annotations

from typing import Any

import psycopg

from hive.store import orders, pool
from hive.store.listen import Listener

# between a failed call and the next try while the server is away
RETRY_PAUSE_SECONDS = 0.05
# a worker whose test has gone away stops waiting after this
BARRIER_TIMEOUT_SECONDS = 60


def race(url: str, name: str, trials: int, barrier: Any, results: Any) -> None:
    """Reach for the one row of each trial at the same moment as the others."""
    with pool.connect(url) as conn:
        for _ in range(trials):
            barrier.wait(BARRIER_TIMEOUT_SECONDS)
            got = orders.claim(conn, name)
            results.put((name, got.issue if got else None))


def drain(url: str, name: str, barrier: Any, results: Any) -> None:
    """Claim and end orders until none is left; report the issues claimed."""
    mine = []
    with pool.connect(url) as conn:
        barrier.wait(BARRIER_TIMEOUT_SECONDS)
        while (got := orders.claim(conn, name)) is not None:
            if not orders.end(conn, got.fence, "finished"):
                raise AssertionError(f"{name} lost its own claim of {got.issue}")
            mine.append(got.issue)
    results.put(mine)


def runner(url: str, name: str, poll_seconds: float, stop: Any, results: Any) -> None:
    """The runner's loop: claim and end through a held connection that checks itself,
    sleep on LISTEN, carry on across a server restart; report the issues ended and the
    failed calls seen."""
    mine, failed = [], 0
    with pool.HeldConnection(url) as db, Listener(url) as listener:
        while not stop.is_set():
            try:
                got = orders.claim(db, name)
                if got is None:
                    listener.wait(poll_seconds)
                elif orders.end(db, got.fence, "finished"):
                    mine.append(got.issue)
            except psycopg.OperationalError:
                failed += 1
                stop.wait(RETRY_PAUSE_SECONDS)
    results.put((mine, failed))
