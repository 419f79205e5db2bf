"""LISTEN for the hive's channels. A NOTIFY is only a hint; the rows are the truth.

- `hive_orders` wakes runners (DESIGN 5.2). They also poll every `HIVE_RUNNER_SECONDS`.
- `hive_issues` wakes the Queen when an issue was added, reopened or edited.
- `hive_board` tells the board that a card or an issue's page changed.
- `hive_chat` says a bee's answer is owed in the chat room. The processes that run
  turns wake.

A process holds one LISTEN connection per database, however many loops listen and on
whichever channels (the connection budget, `hive.rules.connections`). Each `Listener` is
a subscriber of that shared connection for the channels it names. The connection LISTENs
the channels its subscribers want, and UNLISTENs a channel nobody wants any more. Its own
thread hands each notification to the subscribers of its channel.

`wait(timeout_seconds)` returns in four cases. A notification arrived. The connection
was lost and made again; every subscriber hears that, and since notifications sent
meanwhile are lost, the owner must re-check the table. Another thread called `wake()`.
Or the timeout passed. So the caller's poll and its wake-up are one loop.

    with Listener(url) as listener:
        while running:
            claim_what_there_is()
            listener.wait(settings.runner_seconds)
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import Enum
from typing import Any, ClassVar

import psycopg

from hive.store.board import BOARD_CHANNEL
from hive.store.chat_turns import CHAT_CHANNEL
from hive.store.issues import ISSUES_CHANNEL
from hive.store.sql import q

log = logging.getLogger("hive.store.listen")

ORDERS_CHANNEL = "hive_orders"
# each channel a subscriber may name: the named queries that LISTEN and UNLISTEN it
STATEMENTS: dict[str, tuple[str, str]] = {
    ORDERS_CHANNEL: ("listen_orders", "unlisten_orders"),
    BOARD_CHANNEL: ("listen_board", "unlisten_board"),
    ISSUES_CHANNEL: ("listen_issues", "unlisten_issues"),
    CHAT_CHANNEL: ("listen_chat", "unlisten_chat"),
}
# between two failed reconnects while the server is away
RECONNECT_PAUSE_SECONDS = 0.2
CONNECT_TIMEOUT_SECONDS = 2
# the shared connection's thread looks for a stop, and for channels to (UN)LISTEN, this often
SLICE_SECONDS = 0.2
# how long a subscriber waits for the shared connection to LISTEN its channel (a
# reconnect that happens meanwhile LISTENs it, and tells it so)
JOIN_WAIT_SECONDS = SLICE_SECONDS + CONNECT_TIMEOUT_SECONDS + 1.0

# the payload of the NOTIFY an ending's own statement sends (`end_order`): `ended:<issue>`
# (a queued or released order's is its issue number)
ENDED_PREFIX = "ended:"


class Reason(Enum):
    """Why a `wait` returned."""

    NOTIFIED = "notified"  # a notification came (its payload is in `payloads`)
    RECONNECTED = "reconnected"  # the connection was made again: notifications were lost
    WOKEN = "woken"  # another thread called `wake()`
    TIMEOUT = "timeout"  # nothing came


_RECONNECTED = object()
_WOKEN = object()


@dataclass(frozen=True)
class Wake:
    reason: Reason
    payloads: tuple[str, ...] = ()

    @property
    def recheck(self) -> bool:
        """Whether the owner should look at the table now (a hint or a lost hint)."""
        return self.reason in (Reason.NOTIFIED, Reason.RECONNECTED)


def is_ending(payload: str) -> bool:
    """Whether a `hive_orders` payload says an order ended (nothing became claimable)."""
    return payload.startswith(ENDED_PREFIX)


class Listener:
    """One subscriber of the process's LISTEN connection to `url`, for `channels`. The
    names are those in STATEMENTS; the default is `hive_orders`. Once built, its
    channels are listened to.

    A notification whose payload `skips` answers true is not handed to it. A claimer
    skips endings; with 64 runners, each ending woke 64 claim passes that found nothing.

    With `one_of`, a notification it does not skip goes to one subscriber only. That is
    the next subscriber of the process that is `one_of` and `hungry`. A host's runners
    share one LISTEN, and a queued order wakes one of them, not the herd. When none is
    hungry, none is woken: a busy loop polls, or is told when its slot frees.

    Raises psycopg.OperationalError when there is no connection yet and it cannot be
    made. Raises ValueError for a channel the hive does not know."""

    def __init__(
        self,
        url: str,
        skips: Callable[[str], bool] | None = None,
        *,
        channels: Iterable[str] = (ORDERS_CHANNEL,),
        one_of: bool = False,
        hungry: Callable[[], bool] | None = None,
    ) -> None:
        self.url = url
        self.skips = skips
        self.one_of = one_of
        self.hungry = hungry or _always
        self.channels = frozenset(channels)
        unknown = sorted(self.channels - STATEMENTS.keys())
        if unknown or not self.channels:
            known = ", ".join(sorted(STATEMENTS))
            raise ValueError(f"cannot listen to {unknown or 'no channel'}: one of {known}")
        self.reconnects = 0
        self._inbox: queue.SimpleQueue[object] = queue.SimpleQueue()
        self._closed = False
        _Shared.join(self)

    def __enter__(self) -> Listener:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop listening. It is safe to call twice. The last subscriber of a channel has
        it UNLISTENed. The last subscriber of all ends the shared connection."""
        if not self._closed:
            self._closed = True
            _Shared.leave(self)

    def wait(self, timeout_seconds: float) -> Wake:
        """Block up to `timeout_seconds` for a notification (see the module)."""
        try:
            got = self._inbox.get(timeout=max(0.0, timeout_seconds))
        except queue.Empty:
            return Wake(Reason.TIMEOUT)
        if got is _RECONNECTED:
            return Wake(Reason.RECONNECTED)
        if got is _WOKEN:
            return Wake(Reason.WOKEN)
        return Wake(Reason.NOTIFIED, (str(got),))

    def wake(self) -> None:
        """Make the owner's `wait` return at once, with the reason WOKEN. That is the
        wait under way, else the next one. Another thread calls it when it has something
        for the owner to do."""
        self._inbox.put(_WOKEN)

    def _skips(self, payload: str) -> bool:
        return self.skips is not None and self.skips(payload)

    def _deliver(self, item: object) -> None:
        if item is _RECONNECTED:
            self.reconnects += 1
        elif self._skips(str(item)):
            return
        self._inbox.put(item)


def _always() -> bool:
    return True


class _Shared:
    """The LISTEN connection of this process to one database, and its reading thread.
    Only that thread uses the connection. It LISTENs and UNLISTENs between two reads."""

    # guards _by_url and every shared connection's `listeners`
    _lock: ClassVar[threading.Lock] = threading.Lock()
    _by_url: ClassVar[dict[str, _Shared]] = {}

    @classmethod
    def join(cls, listener: Listener) -> None:
        with cls._lock:
            shared = cls._by_url.get(listener.url)
            if shared is None:
                shared = cls._by_url[listener.url] = _Shared(listener.url, listener.channels)
            shared.listeners.add(listener)
        shared.await_listening(listener.channels)

    @classmethod
    def leave(cls, listener: Listener) -> None:
        with cls._lock:
            shared = cls._by_url.get(listener.url)
            if shared is None:
                return
            shared.listeners.discard(listener)
            if shared.listeners:
                return  # its thread UNLISTENs what nobody wants now
            del cls._by_url[listener.url]
        shared.stop()

    def __init__(self, url: str, channels: frozenset[str]) -> None:
        self.url = url
        self.listeners: set[Listener] = set()
        self._last = 0  # the `one_of` subscriber the last hint went to (its id; the thread's)
        self._stopping = threading.Event()
        self._conn: psycopg.Connection[Any] | None = _connect(url, channels)
        # what the connection LISTENs now (written by the thread)
        self._listening = channels
        self._listening_changed = threading.Condition()
        self._thread = threading.Thread(target=self._read, name="hive-listen", daemon=True)
        self._thread.start()

    def await_listening(self, channels: frozenset[str]) -> None:
        """Return once the connection LISTENs `channels`, or after JOIN_WAIT_SECONDS. A
        connection lost meanwhile LISTENs them when it is made again."""
        with self._listening_changed:
            if not self._listening_changed.wait_for(
                lambda: channels <= self._listening or self._stopping.is_set(),
                JOIN_WAIT_SECONDS,
            ):
                log.info("listen: %s not listened to yet; the reconnect will", sorted(channels))

    def stop(self) -> None:
        """End the thread, which closes the connection (within SLICE_SECONDS)."""
        self._stopping.set()
        self._listened(frozenset())
        if self._thread is not threading.current_thread():
            self._thread.join(SLICE_SECONDS * 5)

    def _wanted(self) -> frozenset[str]:
        wanted: frozenset[str] = frozenset()
        with _Shared._lock:
            for listener in self.listeners:
                wanted |= listener.channels
        return wanted

    def _listened(self, channels: frozenset[str]) -> None:
        with self._listening_changed:
            self._listening = channels
            self._listening_changed.notify_all()

    def _send(self, note: psycopg.Notify) -> None:
        with _Shared._lock:
            listeners = [one for one in self.listeners if note.channel in one.channels]
        shared = [one for one in listeners if one.one_of and not one._skips(note.payload)]
        for listener in listeners:
            if not listener.one_of:
                listener._deliver(note.payload)
        if shared:
            # in turn: the first hungry one after the last woken (in a fixed order)
            shared.sort(key=id)
            start = next((k for k, one in enumerate(shared) if id(one) > self._last), 0)
            for k in range(len(shared)):
                listener = shared[(start + k) % len(shared)]
                if listener.hungry():
                    self._last = id(listener)
                    listener._deliver(note.payload)
                    return

    def _send_all(self, item: object) -> None:
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
                    self._fit(self._conn)
                    for note in self._conn.notifies(timeout=SLICE_SECONDS):
                        self._send(note)
                except psycopg.Error as err:
                    log.warning("listen: lost the connection (%s); reconnecting", err)
                    self._conn.close()
                    self._conn = None
                    self._listened(frozenset())
        finally:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def _fit(self, conn: psycopg.Connection[Any]) -> None:
        """LISTEN the channels a subscriber wants and UNLISTEN those nobody does."""
        wanted, listening = self._wanted(), self._listening
        if wanted == listening:
            return
        for channel in sorted(listening - wanted):
            conn.execute(q(STATEMENTS[channel][1]))
        for channel in sorted(wanted - listening):
            conn.execute(q(STATEMENTS[channel][0]))
        self._listened(wanted)

    def _reconnect(self) -> None:
        wanted = self._wanted()
        try:
            self._conn = _connect(self.url, wanted)
        except psycopg.Error as err:
            log.debug("listen: reconnect failed (%s)", err)
            self._stopping.wait(RECONNECT_PAUSE_SECONDS)
            return
        self._listened(wanted)
        self._send_all(_RECONNECTED)


def _connect(url: str, channels: frozenset[str]) -> psycopg.Connection[Any]:
    conn = psycopg.connect(url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_SECONDS)
    try:
        for channel in sorted(channels):
            conn.execute(q(STATEMENTS[channel][0]))
    except BaseException:
        conn.close()
        raise
    return conn
