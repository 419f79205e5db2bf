"""Runner processes for the live tests (spawned, so kept free of pytest imports).

Each talks to the test through its end of a pipe (`conftest.Child`): it says `ready`
once connected, waits for `go` with a deadline, and sends what it did. Every wait here
is bounded, and a closed pipe (the test has gone away) ends the worker."""

from __future__ import annotations

from multiprocessing.connection import Connection

import psycopg

from hive.rules.states import Outcome
from hive.store import orders, pool
from hive.store.endings import OrderEnding, end, end_many
from hive.store.listen import Listener

# between a failed call and the next try while the server is away
RETRY_PAUSE_SECONDS = 0.05
# a worker whose test has gone away stops waiting after this
GO_TIMEOUT_SECONDS = 60
READY, GO, STOP = "ready", "go", "stop"


class Gone(Exception):
    """The test closed its end or sent nothing in time: the worker leaves."""


def wait_for(conn: Connection, word: str, timeout_seconds: float = GO_TIMEOUT_SECONDS) -> None:
    try:
        if conn.poll(timeout_seconds) and conn.recv() == word:
            return
    except (EOFError, OSError):
        pass
    raise Gone(f"no {word!r} within {timeout_seconds} s")


def race(url: str, name: str, trials: int, conn: Connection) -> None:
    """Reach for the one row of each trial at the same moment as the others: each result
    sent says this worker waits for the next `go`."""
    with pool.connect(url) as db:
        conn.send(READY)
        for _ in range(trials):
            wait_for(conn, GO)
            got = orders.claim(db, name)
            conn.send((name, got.issue if got else None))


def drain(url: str, name: str, conn: Connection) -> None:
    """Claim and end orders until none is left; report the issues claimed."""
    mine = []
    with pool.connect(url) as db:
        conn.send(READY)
        wait_for(conn, GO)
        while (got := orders.claim(db, name)) is not None:
            if not end(db, OrderEnding(got.fence, Outcome.FINISHED)):
                raise AssertionError(f"{name} lost its own claim of {got.issue}")
            mine.append(got.issue)
    conn.send(mine)


def drain_batches(url: str, name: str, batch: int, conn: Connection) -> None:
    """Claim up to `batch` orders in one statement and end them, until none is left;
    report the issues claimed."""
    mine = []
    with pool.connect(url) as db:
        conn.send(READY)
        wait_for(conn, GO)
        while claimed := orders.claim_many(db, name, batch):
            for got in claimed:
                if not end(db, OrderEnding(got.fence, Outcome.FINISHED)):
                    raise AssertionError(f"{name} lost its own claim of {got.issue}")
                mine.append(got.issue)
    conn.send(mine)


def runner(url: str, name: str, poll_seconds: float, conn: Connection) -> None:
    """The runner's loop: claim and end through a held connection that checks itself,
    sleep on LISTEN, carry on across a server restart, until the test says `stop` (or
    goes away); report the issues ended and the failed calls seen."""
    mine: list[int] = []
    failed = 0
    with pool.HeldConnection(url) as db, Listener(url) as listener:
        conn.send(READY)
        while not conn.poll(0):
            try:
                got = orders.claim(db, name)
                if got is None:
                    listener.wait(poll_seconds)
                elif end(db, OrderEnding(got.fence, Outcome.FINISHED)):
                    mine.append(got.issue)
            except psycopg.OperationalError:
                failed += 1
                conn.poll(RETRY_PAUSE_SECONDS)
    conn.send((mine, failed))


def end_batches(url: str, fences: list[orders.Fence], batch: int, conn: Connection) -> None:
    """End the orders of `fences` in statements of `batch`, in the order given; report
    the issues whose ending landed here."""
    mine = []
    with pool.connect(url) as db:
        conn.send(READY)
        wait_for(conn, GO)
        for at in range(0, len(fences), batch):
            endings = [OrderEnding(f, Outcome.FINISHED) for f in fences[at : at + batch]]
            moves = end_many(db, endings)
            mine.extend(m.issue for m in moves if m.landed)
    conn.send(mine)
