import multiprocessing
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from multiprocessing import connection
from typing import Any

import psycopg
import pytest

from hive.store import orders, pool
from hive.store.orders import NewOrder

from . import workers

_ctx = multiprocessing.get_context("spawn")
# how long a child may take to leave after it was told to (or signalled)
EXIT_WAIT_SECONDS = 5.0
# a wait for an exit is cut in slices this long, so the exit code is read without blocking
EXIT_SLICE_SECONDS = 0.1


@pytest.fixture
def db(hive_db_url: str) -> Iterator[Any]:
    """A pool of two connections to the test's database."""
    made = pool.make_pool(hive_db_url, max_size=2)
    try:
        yield made
    finally:
        made.close()


@pytest.fixture
def conn(hive_db_url: str) -> Iterator[psycopg.Connection[Any]]:
    with pool.connect(hive_db_url) as c:
        yield c


def queue(conn: psycopg.Connection[Any], issue: int, **fields: Any) -> orders.Order:
    """A queued order for `issue` (elsewhere mode), as the Queen writes it."""
    written = orders.insert(conn, NewOrder(issue, f"queen-{issue}", "main", **fields), queued=True)
    return _written(conn, issue, written)


def local(conn: psycopg.Connection[Any], issue: int) -> orders.Order:
    """An order the Queen runs herself (queued_at NULL)."""
    written = orders.insert(conn, NewOrder(issue, f"queen-{issue}", "main"), queued=False)
    return _written(conn, issue, written)


def _written(conn: psycopg.Connection[Any], issue: int, written: orders.Insertion) -> orders.Order:
    assert written is orders.Insertion.WRITTEN
    made = orders.get(conn, issue)
    assert made is not None
    return made


def backdate(conn: psycopg.Connection[Any], issue: int, column: str, minutes: float) -> None:
    """Move one of the order's clocks `minutes` into the past (the test's clock)."""
    assert column in ("claimed_at", "dispatched_at", "finished_at")
    statements = {
        "claimed_at": "UPDATE hive.queen_dispatch SET claimed_at = claimed_at"
        " - make_interval(secs => %s) WHERE issue = %s",
        "dispatched_at": "UPDATE hive.queen_dispatch SET dispatched_at = dispatched_at"
        " - make_interval(secs => %s) WHERE issue = %s",
        "finished_at": "UPDATE hive.queen_dispatch SET finished_at = finished_at"
        " - make_interval(secs => %s) WHERE issue = %s",
    }
    conn.execute(statements[column], (minutes * 60.0, issue))


class Child:
    """A spawned process and the parent's end of its pipe. Pipes, not multiprocessing's
    Barrier, Queue or Event: those share semaphores, and a process that dies inside one
    (or is terminated there) leaves every other one blocked on a futex for good, with no
    timeout that reaches it. A pipe only ever waits with a deadline, and the death of
    the other end is an EOF, seen at once."""

    def __init__(self, target: Callable[..., None], *args: Any, name: str = "") -> None:
        self.conn, self._theirs = _ctx.Pipe()
        self.process = _ctx.Process(target=target, args=(*args, self._theirs), name=name)

    @property
    def name(self) -> str:
        return self.process.name

    def start(self) -> None:
        self.process.start()
        self._theirs.close()  # only the child holds its end: its exit is our EOF

    def send(self, message: Any) -> None:
        self.conn.send(message)

    def receive(self, timeout_seconds: float) -> Any:
        """The child's next message within the deadline, or a failure saying why not."""
        if not self.conn.poll(timeout_seconds):
            raise AssertionError(f"{self.name} sent nothing in {timeout_seconds:g} s")
        try:
            return self.conn.recv()
        except EOFError:
            code = exited(self.process, EXIT_WAIT_SECONDS)
            raise AssertionError(f"{self.name} died (exit code {code})") from None


def exited(process: Any, timeout_seconds: float) -> int | None:
    """The exit code once `process` ended, or None after the deadline: never a blocking
    waitpid (`Process.join` may make one after its sentinel is ready)."""
    deadline = time.monotonic() + timeout_seconds
    while (code := process.exitcode) is None:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return None
        connection.wait([process.sentinel], min(remaining, EXIT_SLICE_SECONDS))
    return code


def ready_then_go(children: Sequence[Child], timeout_seconds: float) -> None:
    """Wait until every child said it is ready, then tell them all to go."""
    for child in children:
        assert child.receive(timeout_seconds) == workers.READY, f"{child.name} not ready"
    for child in children:
        child.send(workers.GO)


def finish(children: Sequence[Child], timeout_seconds: float) -> None:
    """Every child has ended, within the deadline, with exit code 0."""
    deadline = time.monotonic() + timeout_seconds
    for child in children:
        code = exited(child.process, max(0.0, deadline - time.monotonic()))
        assert code == 0, f"{child.name} exit code {code}"


@contextmanager
def running(children: Sequence[Child]) -> Iterator[Sequence[Child]]:
    """Start the children; whatever happens, none outlives the test (a failed assertion
    must not leave a worker waiting, nor the interpreter's exit joining it forever):
    their pipes close (a waiting child sees EOF and leaves), then SIGTERM, then SIGKILL,
    each with a bounded wait."""
    try:
        for child in children:
            child.start()
        yield children
    finally:
        for child in children:
            child.conn.close()
        for stop in (None, "terminate", "kill"):
            alive = [c.process for c in children if c.process.pid and c.process.exitcode is None]
            for p in alive:
                if stop is not None:
                    getattr(p, stop)()
            for p in alive:
                exited(p, EXIT_WAIT_SECONDS)
        left = [c.name for c in children if c.process.pid and c.process.exitcode is None]
        assert not left, f"still running after SIGKILL: {left}"
