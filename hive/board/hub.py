"""The board's event streams, fed by LISTEN/NOTIFY on `hive_board`.

From the first page or stream on, one thread per process listens, as a subscriber of
the process's one LISTEN connection (`hive.store.listen`: the board costs no connection
of its own). A burst of notifications is gathered for `COALESCE_SECONDS`, the cards they
name are read once, and each becomes an event sent to every board stream (`card`, with
an id `<epoch>.<seq>`); an issue's page gets a bare hint (`issue` or `transcript`) and
fetches what it shows. A stream that joins is caught up on this thread, in order with
the events: the events after the id it last saw while they are kept (`rules.board.
catch_up`), else a `snapshot` of the whole board. When the listening connection was lost
and made again, the notifications sent meanwhile are lost, so a new epoch starts and
every board stream gets a snapshot. Every `PING_SECONDS` each stream gets a comment line,
so a dead client is found and proxies keep the connection. With no stream open and no
page drawn for `IDLE_STOP_SECONDS` the thread stops listening (the shared connection
UNLISTENs `hive_board`); the next page starts it again.

Lifecycle: `start()` listens (raises psycopg.OperationalError when the store is away)
and is safe to call again; `stop()` is safe twice and before `start()`.
"""

from __future__ import annotations

import collections
import json
import logging
import os
import secrets
import socket
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import psycopg

from hive.rules.board import SNAPSHOT, catch_up
from hive.services import board_watch
from hive.services.board_watch import Listener, Reason, Wake

log = logging.getLogger("hive.board")

COALESCE_SECONDS = 0.05  # a burst of notifications becomes one read of the cards
PING_SECONDS = 15.0
KEPT_EVENTS = 512  # card events kept for streams that reconnect
RETRY_MS = 2000  # what a browser waits before it reconnects
PAUSE_SECONDS = 1.0  # after a failed read of the store
STOP_JOIN_SECONDS = 2.0
WATCH_TTL_SECONDS = 4 * PING_SECONDS  # renewed at every ping; a dead process's expires
IDLE_STOP_SECONDS = 600.0  # no stream nor page this long: stop listening until the next page
BOARD_KINDS = frozenset("iot")  # what moves or rewrites a card
ISSUE_KINDS = frozenset("iocjb")  # what an issue's page shows besides the transcript


class Sink(Protocol):
    def send(self, data: bytes) -> bool: ...

    def close(self) -> None: ...


class Renderer(Protocol):
    def watch(self, holder: str, ttl_seconds: float) -> None:
        """Tell the store a board listens here (its triggers notify only then)."""
        ...

    def unwatch(self, holder: str) -> None: ...

    def cards(self, numbers: Sequence[int]) -> list[dict[str, Any]]:
        """A card event's data for each issue named (and those it blocks): `issue`,
        `column` (None: no card), `sort`, `html`."""
        ...

    def snapshot(self) -> dict[str, Any]:
        """The whole board: `columns` (name -> HTML)."""
        ...


def sse(event: str, data: str, event_id: str | None = None) -> bytes:
    """One server-sent event (`data` holds no newline: JSON or a number)."""
    head = f"id: {event_id}\n" if event_id is not None else ""
    return f"{head}event: {event}\ndata: {data}\n\n".encode()


FIRST_BYTES = f"retry: {RETRY_MS}\n\n".encode()
PING = b": ping\n\n"


@dataclass(eq=False)
class _Sub:
    sink: Sink
    issue: int | None  # None: the board; else that issue's page
    resume: str | None  # the last event id it saw


@dataclass
class _Batch:
    board: set[int] = field(default_factory=set)
    issues: dict[int, set[str]] = field(default_factory=dict)
    rounds: bool = False
    lost: bool = False  # notifications may have been lost: refresh everything

    def add(self, payload: str) -> None:
        kind, _, number = payload.partition(":")
        if kind == "r":
            self.rounds = True
            return
        if not number.isdigit():
            return
        n = int(number)
        if kind in BOARD_KINDS:
            self.board.add(n)
        self.issues.setdefault(n, set()).add(kind)

    def __bool__(self) -> bool:
        return bool(self.board or self.issues or self.rounds or self.lost)


class Hub:
    def __init__(self, url: str, renderer: Renderer) -> None:
        self.url = url
        self.renderer = renderer
        self._lock = threading.Lock()
        # held by start() and stop() only: a start waits for its LISTEN without holding
        # `_lock`, which the server's loop thread takes to add a stream
        self._starting = threading.Lock()
        self._listener: Listener | None = None
        self._thread: threading.Thread | None = None
        self._asked_at = time.monotonic()  # the last start(): a page or a stream opening
        self._stopping = threading.Event()
        self._joining: list[_Sub] = []
        self._board: set[_Sub] = set()
        self._pages: set[_Sub] = set()
        self._epoch = secrets.token_hex(4)
        self._holder = f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"
        self._seq = 0
        self._kept: collections.deque[tuple[int, bytes]] = collections.deque(maxlen=KEPT_EVENTS)
        self._pending = _Batch()  # what a failed read left to do

    # ---- from any thread ---------------------------------------------------------------

    def start(self) -> None:
        with self._starting:
            with self._lock:
                self._asked_at = time.monotonic()  # a stream may follow: not idle now
                if self._thread is not None:
                    return
            self._stopping.clear()
            self._renew()  # first (or again: it may have expired while no board listened)
            listener = board_watch.listener(self.url)
            thread = threading.Thread(
                target=self._run, args=(listener,), name="hive-board", daemon=True
            )
            with self._lock:
                self._listener, self._thread = listener, thread
            thread.start()

    def stop(self) -> None:
        with self._starting:
            with self._lock:
                thread, self._thread = self._thread, None
                listener, self._listener = self._listener, None
                self._stopping.set()
            if listener is not None:
                listener.wake()
            if thread is not None:
                thread.join(STOP_JOIN_SECONDS)
            with self._lock:
                subs = [*self._joining, *self._board, *self._pages]
                self._joining, self._board, self._pages = [], set(), set()
            if listener is not None:
                listener.close()
                self._unwatch()
            for sub in subs:
                sub.sink.close()

    @property
    def streams(self) -> int:
        with self._lock:
            return len(self._joining) + len(self._board) + len(self._pages)

    def position(self) -> str:
        """The id of the newest event: a page drawn now resumes its stream after it."""
        with self._lock:
            return f"{self._epoch}.{self._seq}"

    def subscribe(self, sink: Sink, *, resume: str | None, issue: int | None) -> Callable[[], None]:
        """Add a stream (from the server's loop thread: it only queues the sink); the
        callable returned forgets it."""
        sub = _Sub(sink, issue, resume)
        with self._lock:
            self._joining.append(sub)
        self._wake()
        return lambda: self._forget(sub)

    def _forget(self, sub: _Sub) -> None:
        with self._lock:
            self._board.discard(sub)
            self._pages.discard(sub)
            if sub in self._joining:
                self._joining.remove(sub)

    def _wake(self) -> None:
        with self._lock:
            listener = self._listener
        if listener is not None:
            listener.wake()

    # ---- the hub's thread --------------------------------------------------------------

    def _run(self, listener: Listener) -> None:
        next_ping = time.monotonic() + PING_SECONDS
        idle_since = time.monotonic()
        while not self._stopping.is_set():
            if self.streams:
                idle_since = time.monotonic()
            elif self._idle_for(idle_since) >= IDLE_STOP_SECONDS and self._idle_stop(listener):
                return
            batch = self._gather(listener, max(0.0, next_ping - time.monotonic()))
            if self._stopping.is_set():
                break
            try:
                self._publish(batch)
                self._admit()
            except psycopg.Error as err:
                log.warning("the board could not read the store: %s; retrying", err)
                self._stopping.wait(PAUSE_SECONDS)
            except Exception:
                log.exception("the board failed to publish; retrying")
                self._stopping.wait(PAUSE_SECONDS)
            if time.monotonic() >= next_ping:
                self._send_all(PING)
                self._renew()
                next_ping = time.monotonic() + PING_SECONDS

    def _renew(self) -> None:
        try:
            self.renderer.watch(self._holder, WATCH_TTL_SECONDS)
        except Exception as err:  # the store is away: the next ping tries again
            log.warning("the board could not renew its watch: %s", err)

    def _unwatch(self) -> None:
        try:
            self.renderer.unwatch(self._holder)
        except Exception as err:  # it expires by itself
            log.info("the board could not drop its watch: %s", err)

    def _idle_for(self, idle_since: float) -> float:
        """Seconds since a stream was last seen open or a page last asked for the hub."""
        with self._lock:
            return time.monotonic() - max(idle_since, self._asked_at)

    def _idle_stop(self, listener: Listener) -> bool:
        """Stop listening when no stream is open (a later page starts a new epoch); True
        when this thread is to end."""
        if not self._starting.acquire(blocking=False):
            return False  # a start or a stop is under way: look again at the next turn
        try:
            with self._lock:
                if self._listener is not listener:
                    return True  # stopped meanwhile: stop() closes what this thread used
                if self._joining or self._board or self._pages:
                    return False
                self._thread = self._listener = None
                self._epoch = secrets.token_hex(4)
                self._kept.clear()
            listener.close()  # the shared connection UNLISTENs hive_board
            self._unwatch()  # before a later start() watches again
        finally:
            self._starting.release()
        log.info("no board is open: stopped listening")
        return True

    def _gather(self, listener: Listener, timeout: float) -> _Batch:
        batch, self._pending = self._pending, _Batch()
        if batch or self._joining:
            timeout = 0.0
        self._take(listener.wait(timeout), batch)
        deadline = time.monotonic() + COALESCE_SECONDS
        while batch and (left := deadline - time.monotonic()) > 0:  # gather the burst
            heard = listener.wait(left)
            if heard.reason is Reason.TIMEOUT:
                break
            self._take(heard, batch)
        return batch

    def _take(self, heard: Wake, batch: _Batch) -> None:
        """Add what the listener heard to `batch` (a stream that joined or a stop only
        woke the thread)."""
        for payload in heard.payloads:
            batch.add(payload)
        if heard.reason is Reason.RECONNECTED:
            # notifications were lost while the connection was away: refresh everything
            self._renew()  # the watch may have expired meanwhile
            with self._lock:
                self._epoch = secrets.token_hex(4)  # the ids sent so far name nothing now
                self._kept.clear()
            batch.lost = True
            log.info("the board listens again; every board gets a snapshot")

    def _publish(self, batch: _Batch) -> None:
        if batch.lost:
            with self._lock:
                self._joining += [*self._board]
                self._board.clear()
                for sub in self._joining:
                    sub.resume = None
            self._signal_pages(None, "issue")
            self._signal_pages(None, "transcript")
        if batch.board:  # even with no stream open: a reconnect may replay it
            try:
                found = self.renderer.cards(sorted(batch.board))
            except Exception:
                self._pending.board |= batch.board
                raise
            for data in found:
                self._send_card(data)
        for n, kinds in batch.issues.items():
            if kinds & ISSUE_KINDS:
                self._signal_pages(n, "issue")
            if "t" in kinds:
                self._signal_pages(n, "transcript")
        if batch.rounds:
            self._signal_pages(None, "issue")

    def _send_card(self, data: dict[str, Any]) -> None:
        with self._lock:
            self._seq += 1
            event = sse("card", json.dumps(data), f"{self._epoch}.{self._seq}")
            self._kept.append((self._seq, event))
            for sub in list(self._board):
                if not sub.sink.send(event):
                    self._board.discard(sub)

    def _signal_pages(self, issue: int | None, event: str) -> None:
        with self._lock:
            for sub in list(self._pages):
                mine = issue is None or sub.issue == issue
                if mine and not sub.sink.send(sse(event, str(sub.issue))):
                    self._pages.discard(sub)

    def _admit(self) -> None:
        """Catch up the streams that joined, then send them what comes next."""
        with self._lock:
            joining, self._joining = self._joining, []
        snapshot: bytes | None = None
        try:
            for sub in joining:
                if sub.issue is not None:
                    with self._lock:
                        self._pages.add(sub)
                    continue
                replay = self._replay(sub.resume)
                if replay is None:
                    if snapshot is None:
                        with self._lock:
                            mark = f"{self._epoch}.{self._seq}"
                        snapshot = sse("snapshot", json.dumps(self.renderer.snapshot()), mark)
                    replay = [snapshot]
                with self._lock:
                    if all(sub.sink.send(event) for event in replay):
                        self._board.add(sub)
        except Exception:
            with self._lock:  # not caught up: they wait for the next turn
                self._joining += [s for s in joining if s not in self._board | self._pages]
            raise

    def _replay(self, resume: str | None) -> list[bytes] | None:
        """The kept events after `resume`, or None when a snapshot must stand in."""
        with self._lock:
            epoch, _, seq = (resume or "").partition(".")
            last_seen = int(seq) if epoch == self._epoch and seq.isdigit() else None
            oldest = self._kept[0][0] if self._kept else self._seq + 1
            first = catch_up(last_seen, oldest, self._seq)
            if first == SNAPSHOT:
                return None
            return [event for n, event in self._kept if n >= first]

    def _send_all(self, data: bytes) -> None:
        with self._lock:
            for subs in (self._board, self._pages):
                for sub in list(subs):
                    if not sub.sink.send(data):
                        subs.discard(sub)
