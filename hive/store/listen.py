"""LISTEN for `hive_orders` (DESIGN 5.2: runners wake on LISTEN/NOTIFY and also poll every
`HIVE_RUNNER_SECONDS`; a NOTIFY is only a hint).

A process holds one LISTEN connection per database, however many loops listen (the
connection budget, `hive.rules.connections`): each `Listener` is a subscriber of that
shared connection, whose own thread hands every notification to every subscriber.

`wait(timeout_seconds)` returns when a notification arrives, when the connection was
lost and made again (notifications sent meanwhile are lost, so the owner must re-check
the table), or when the timeout passes: the caller's poll and its wake-up are one loop.

    with Listener(url) as listener:
        while running:
            claim_what_there_is()
            listener.wait(settings.runner_seconds)
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import psycopg

from hive.store.sql import q

log = logging.getLogger("hive.store.listen")

ORDERS_CHANNEL = "hive_orders"
# between two failed reconnects while the server is away
RECONNECT_PAUSE_SECONDS = 0.2
CONNECT_TIMEOUT_SECONDS = 2
# the shared connection's thread looks for a stop this often
SLICE_SECONDS = 0.2

# the payload of the NOTIFY an ending's own statement sends (`end_order`): `ended:<issue>`
# (a queued or released order's is its issue number)
ENDED_PREFIX = "ended:"

Reason = Literal["notified", "reconnected", "timeout"]
_RECONNECTED = object()


@dataclass(frozen=True)
class Wake:
    reason: Reason
    payloads: tuple[str, ...] = ()

    @property
    def recheck(self) -> bool:
        """Whether the owner should look at the table now (a hint or a lost hint)."""
        return self.reason != "timeout"


def is_ending(payload: str) -> bool:
    """Whether a `hive_orders` payload says an order ended (nothing became claimable)."""
    return payload.startswith(ENDED_PREFIX)


class Listener:
    """One subscriber of the process's LISTEN connection to `url`; a notification whose
    payload `skips` answers true is not handed to it (a claimer skips endings: with 64
    runners, each ending woke 64 claim passes that could find nothing). Raises
    psycopg.OperationalError when there is none yet and it cannot be made."""

    def __init__(self, url: str, skips: Callable[[str], bool] | None = None) -> None:
        self.url = url
        self.skips = skips
        self.reconnects = 0
        self._inbox: queue.SimpleQueue[object] = queue.SimpleQueue()
        self._closed = False
        _Shared.join(self)

    def __enter__(self) -> Listener:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop listening; safe to call twice (the last subscriber's close ends the
        shared connection)."""
        if not self._closed:
            self._closed = True
            _Shared.leave(self)

    def wait(self, timeout_seconds: float) -> Wake:
        """Block up to `timeout_seconds` for a notification (see the module)."""
        try:
            got = self._inbox.get(timeout=max(0.0, timeout_seconds))
        except queue.Empty:
            return Wake("timeout")
        if got is _RECONNECTED:
            return Wake("reconnected")
        return Wake("notified", (str(got),))

    def _deliver(self, item: object) -> None:
        if item is _RECONNECTED:
            self.reconnects += 1
        elif self.skips is not None and self.skips(str(item)):
            return
        self._inbox.put(item)


class _Shared:
    """The LISTEN connection of this process to one database, and its reading thread."""

    _lock: ClassVar[threading.Lock] = threading.Lock()
    _by_url: ClassVar[dict[str, _Shared]] = {}

    @classmethod
    def join(cls, listener: Listener) -> None:
        with cls._lock:
            shared = cls._by_url.get(listener.url)
            if shared is None:
                shared = cls._by_url[listener.url] = _Shared(listener.url)
            shared.listeners.add(listener)

    @classmethod
    def leave(cls, listener: Listener) -> None:
        with cls._lock:
            shared = cls._by_url.get(listener.url)
            if shared is None:
                return
            shared.listeners.discard(listener)
            if shared.listeners:
                return
            del cls._by_url[listener.url]
        shared.stop()

    def __init__(self, url: str) -> None:
        self.url = url
        self.listeners: set[Listener] = set()
        self._stopping = threading.Event()
        self._conn: psycopg.Connection[Any] | None = _connect(url)
        self._thread = threading.Thread(target=self._read, name="hive-listen", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """End the thread, which closes the connection (within SLICE_SECONDS)."""
        self._stopping.set()
        if self._thread is not threading.current_thread():
            self._thread.join(SLICE_SECONDS * 5)

    def _send(self, item: object) -> None:
        with _Shared._lock:
            listeners = list(self.listeners)
        for listener in listeners:
            listener._deliver(item)

    def _read(self) -> None:
        try:
            while not self._stopping.is_set():
                if self._conn is None:
                    self._reconnect()
                    continue
                try:
                    for note in self._conn.notifies(timeout=SLICE_SECONDS):
                        self._send(note.payload)
                except psycopg.Error as err:
                    log.warning("listen: lost the connection (%s); reconnecting", err)
                    self._conn.close()
                    self._conn = None
        finally:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def _reconnect(self) -> None:
        try:
            self._conn = _connect(self.url)
        except psycopg.Error as err:
            log.debug("listen: reconnect failed (%s)", err)
            self._stopping.wait(RECONNECT_PAUSE_SECONDS)
            return
        self._send(_RECONNECTED)


def _connect(url: str) -> psycopg.Connection[Any]:
    conn = psycopg.connect(url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_SECONDS)
    try:
        conn.execute(q("listen_orders"))
    except BaseException:
        conn.close()
        raise
    return conn
