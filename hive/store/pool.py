"""Connections to the hive's database. There are three kinds: a checked pool, a held
connection that checks itself the same way, and a plain connection. The held connection
is for one thread's hot path, such as a runner's claims and heartbeats.

The pool hands out only connections that work, so a server restart costs callers no
failed call. Its check is `ConnectionPool.check_connection`, a round trip. The check is
skipped for a connection that came back to the pool less than `CHECK_IDLE_SECONDS` ago
and whose socket has nothing to say. A server that stops or restarts tells each of its
connections: the socket turns readable with the goodbye or EOF. That is seen without a
round trip. So a hot runner pays no extra round trip per claim.

A pool's checkout costs locks and its worker threads. Here that is about 50 us of CPU a
call, a third of a claim's client time. So the claim path uses `HeldConnection`
instead: one connection with the same two checks, reconnected on the spot when it fails
them.

Through PgBouncer in transaction mode (`prepare=False`) a connection prepares nothing.
psycopg prepares a statement run five times on a connection. The next transaction may
run on another server connection, which never saw it (PgBouncer 1.18).

A process's pool is a `BudgetPool`. `fit(limit)` changes its size while it runs; the
tree fits it to the bees running (`hive.rules.connections`). A connection beyond the
limit is closed: at once when idle, or when it comes back when in use.
"""

from __future__ import annotations

import select
import time
import weakref
from typing import Any

import psycopg
from psycopg_pool import ConnectionPool

# a connection idle longer than this is checked with a round trip before it is handed out
CHECK_IDLE_SECONDS = 1.0
CONNECT_TIMEOUT_SECONDS = 5
_returned_at: weakref.WeakKeyDictionary[psycopg.Connection[Any], float] = (
    weakref.WeakKeyDictionary()
)


def connect(url: str, *, prepare: bool = True) -> psycopg.Connection[Any]:
    """One autocommit connection. It is for a caller that keeps its own connection (the
    bench's bare loop, a LISTEN connection) or needs an explicit transaction."""
    return psycopg.connect(url, **_kwargs(prepare))


def _kwargs(prepare: bool) -> dict[str, Any]:
    kwargs: dict[str, Any] = {"autocommit": True, "connect_timeout": CONNECT_TIMEOUT_SECONDS}
    if not prepare:
        kwargs["prepare_threshold"] = None
    return kwargs


def make_pool(
    url: str,
    *,
    min_size: int = 1,
    max_size: int = 4,
    name: str = "hive",
    open_now: bool = True,
    prepare: bool = True,
) -> ConnectionPool[Any]:
    """An autocommit pool whose every handed-out connection is checked (see the module)."""
    pool: ConnectionPool[Any] = ConnectionPool(
        url,
        min_size=min_size,
        max_size=max_size,
        name=name,
        kwargs=_kwargs(prepare),
        check=check_connection,
        reset=_note_return,
        open=False,
    )
    if open_now:
        pool.open(wait=True, timeout=CONNECT_TIMEOUT_SECONDS * 2)
    return pool


class BudgetPool(ConnectionPool[Any]):
    """A checked autocommit pool (see `make_pool`) held to a limit that `fit` moves."""

    def fit(self, limit: int) -> None:
        """Hold at most `limit` connections (at least 1) from now on. Idle ones beyond it
        are closed now, and checked-out ones when they are given back."""
        limit = max(1, limit)
        if limit != self.max_size:
            self.resize(min(self.min_size, limit), limit)
        self._trim()

    def putconn(self, conn: psycopg.Connection[Any]) -> None:
        super().putconn(conn)
        self._trim()

    def held(self) -> int:
        """Connections open or being opened now."""
        with self._lock:
            return self._nconns

    def _trim(self) -> None:
        extra: list[psycopg.Connection[Any]] = []
        with self._lock:
            while self._nconns > self.max_size and self._pool:
                extra.append(self._pool.pop())
                self._nconns -= 1
        for conn in extra:
            conn.close()


def budget_pool(url: str, *, limit: int, name: str = "hive", prepare: bool = True) -> BudgetPool:
    """An open `BudgetPool` of at most `limit` connections, one made now. It prepares no
    statement unless `prepare` (see the module)."""
    pool = BudgetPool(
        url,
        min_size=1,
        max_size=max(1, limit),
        name=name,
        kwargs=_kwargs(prepare),
        check=check_connection,
        reset=_note_return,
        open=False,
    )
    pool.open(wait=True, timeout=CONNECT_TIMEOUT_SECONDS * 2)
    return pool


def check_connection(conn: psycopg.Connection[Any]) -> None:
    """Raise if `conn` is not usable (the pool then discards it and takes another)."""
    if conn.closed or conn.broken:
        raise psycopg.OperationalError("connection closed")
    if _socket_has_news(conn):
        # unprompted bytes on an idle connection are the server's goodbye (or EOF)
        conn.pgconn.consume_input()
        if conn.pgconn.status != psycopg.pq.ConnStatus.OK or conn.pgconn.is_busy():
            raise psycopg.OperationalError("the server closed the connection")
        ConnectionPool.check_connection(conn)
        return
    returned = _returned_at.get(conn, 0.0)
    if time.monotonic() - returned > CHECK_IDLE_SECONDS:
        ConnectionPool.check_connection(conn)


def _socket_has_news(conn: psycopg.Connection[Any]) -> bool:
    try:
        readable, _, _ = select.select([conn.pgconn.socket], [], [], 0)
    except (OSError, ValueError, psycopg.OperationalError):
        return True
    return bool(readable)


def _note_return(conn: psycopg.Connection[Any]) -> None:
    _returned_at[conn] = time.monotonic()


class HeldConnection:
    """One thread's own connection. It checks itself before each use, as the pool's
    connections do, and reconnects when the check fails. `get()` never hands out a
    connection known to be dead. It is not thread-safe; keep one per thread."""

    def __init__(self, url: str, *, prepare: bool = True) -> None:
        self.url = url
        self.prepare = prepare
        self.reconnects = 0
        self._conn: psycopg.Connection[Any] | None = None
        self._used = 0.0

    def __enter__(self) -> HeldConnection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def get(self) -> psycopg.Connection[Any]:
        """A checked connection (raises OperationalError only if reconnecting fails)."""
        now = time.monotonic()
        conn = self._conn
        if conn is not None and (now - self._used > CHECK_IDLE_SECONDS or _socket_has_news(conn)):
            try:
                check_connection(conn)
            except psycopg.Error:
                conn.close()
                conn = self._conn = None
                self.reconnects += 1
        if conn is None:
            conn = self._conn = connect(self.url, prepare=self.prepare)
        self._used = now
        return conn

    def close(self) -> None:
        """Close the connection. It is safe to call twice. A later `get()` connects
        again."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None
