"""The room's work, one pass at a time (`run_once`), for the chat's loop actor.

A pass: join the room as every bot (the first pass, or after the homeserver refused a
bot), send what the clocks let go, sync the room as the Queen (waiting for a message
until the clocks' next send, at most `sync_wait_seconds`), owe each call's answer as a
row, keep the sync token once those rows exist, and send again. The first sync of a room
never seen starts from now: nothing said before the hive joined is answered.

The homeserver away (a restart) is waited out: the pass backs off (RETRY_FIRST_SECONDS,
doubling to RETRY_MAX_SECONDS) and the rows wait in the store. Only the process that
holds the Queen lease speaks (`holds_lease`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from hive.chat.calls import Calls
from hive.chat.config import QUEEN, ChatConfig
from hive.chat.gate import refused
from hive.chat.matrix import MatrixClient, MatrixError
from hive.chat.moves import owe_moves
from hive.chat.outbox import Outbox, Sent
from hive.chat.turns import answer_unclaimed
from hive.metrics import HiveMetrics
from hive.rules.chat import Bot, issue_of
from hive.store import chat as store
from hive.store.db import Db

log = logging.getLogger("hive.chat")

RETRY_FIRST_SECONDS = 0.5
RETRY_MAX_SECONDS = 5.0
IDLE_SLICE_SECONDS = 0.2  # a pass that may not speak waits this long (a stop is seen)
THREADS_REMEMBERED_MAX = 1000


@dataclass
class Pass:
    read: int = 0
    owed: int = 0
    sent: int = 0
    dropped: int = 0
    problem: str = ""

    def __bool__(self) -> bool:
        return bool(self.owed or self.sent or self.dropped or self.problem)

    def __str__(self) -> str:
        said = f"chat: read {self.read}, owed {self.owed}, sent {self.sent}"
        if self.dropped:
            said += f", dropped {self.dropped}"
        return said + (f"; {self.problem}" if self.problem else "")


@dataclass
class Room:
    db: Db
    config: ChatConfig
    metrics: HiveMetrics
    holds_lease: Callable[[], bool] = lambda: True
    sleep: Callable[[float], None] = time.sleep
    after_send: Callable[[int], None] = lambda row_id: None
    room_id: str = ""
    bots: list[Bot] = field(default_factory=list)
    names: dict[str, str] = field(default_factory=dict)  # Matrix id -> bot name
    outbox: Outbox | None = None  # made when the bots joined
    _since: str | None = None
    _retry_at: float = 0.0
    _moves_at: float = 0.0
    _retry_seconds: float = RETRY_FIRST_SECONDS
    _thread_issues: dict[str, int | None] = field(default_factory=dict)

    def run_once(self) -> Pass:
        done = Pass()
        wait = self._retry_at - time.monotonic()
        if wait > 0 or not self.holds_lease():
            self.sleep(min(wait, IDLE_SLICE_SECONDS) if wait > 0 else IDLE_SLICE_SECONDS)
            return done
        try:
            outbox = self.outbox or self._join()
            self._moves(done)
            held = self._sent(outbox.send_due(), done)
            if not done.problem:
                sync_wait = min(held, self.config.sync_wait_seconds) if held else None
                self._read(sync_wait or self.config.sync_wait_seconds, done)
                self._sent(outbox.send_due(), done)
        except MatrixError as err:
            done.problem = str(err)
            if err.status not in (0, 429) and err.status < 500:
                self.outbox = None  # refused (left the room, a token revoked): join anew
        if done.problem:
            self._retry_at = time.monotonic() + self._retry_seconds
            self._retry_seconds = min(self._retry_seconds * 2, RETRY_MAX_SECONDS)
        else:
            self._retry_seconds = RETRY_FIRST_SECONDS
        return done

    def close(self) -> None:
        """Nothing held: every row is in the store, every request is bounded."""

    def _moves(self, done: Pass) -> None:
        """Owe the Queen's posts of the moves since the last look, every few seconds, and
        answer the bees' turns no process claimed in time."""
        if time.monotonic() < self._moves_at:
            return
        self._moves_at = time.monotonic() + self.config.moves_every_seconds
        done.owed += owe_moves(self.db, self.config.room, self.config.spend_cap_usd)
        done.owed += answer_unclaimed(self.db)

    def _read(self, wait_seconds: float, done: Pass) -> None:
        """One sync as the Queen; each message's calls owed before the token is kept."""
        assert self.outbox is not None
        queen = self.outbox.clients[QUEEN]
        page = queen.sync(self.room_id, self._since, int(wait_seconds * 1000))
        calls = Calls(self.db, self.bots, self.names, self._thread_issue, self._refused)
        for message in page.messages:
            done.read += 1
            done.owed += len(calls.owe(message))
        if page.limited:
            log.warning("chat: the homeserver skipped messages (more than one page at once)")
        store.set_token(self.db, self.config.room, page.next_batch)
        self._since = page.next_batch

    def _join(self) -> Outbox:
        clients = {b.name: MatrixClient(self.config.url, b.token) for b in self.config.bots}
        bots, names = [], {}
        for name, client in clients.items():
            user_id = client.whoami()
            self.room_id = client.join(self.config.room)
            bots.append(Bot(user_id, client.displayname(user_id)))
            names[user_id] = name
        self.bots, self.names = bots, names
        self._since, _ = store.cursor(self.db, self.config.room)
        if self._since is None:
            # a room never synced: start from now
            page = clients[QUEEN].sync(self.room_id, None, 0)
            store.set_token(self.db, self.config.room, page.next_batch)
            self._since = page.next_batch
        self.outbox = Outbox(
            self.db,
            clients,
            self.room_id,
            self.config.clocks,
            self.metrics,
            after_send=self.after_send,
        )
        log.info("chat: %d bots joined %s", len(bots), self.config.room)
        return self.outbox

    def _sent(self, sent: Sent, done: Pass) -> float:
        """Add what the outbox did to `done`; the seconds until the clocks let more go."""
        done.sent += sent.sent
        done.dropped += sent.dropped
        if sent.failed is not None:
            done.problem = str(sent.failed)
        return sent.wait_seconds

    def _refused(self, issue: int) -> str | None:
        return refused(self.db, issue, self.config.spend_cap_usd, self.config.credits)

    def _thread_issue(self, root: str) -> int | None:
        """The issue a thread's root names (asked of the homeserver once per root)."""
        assert self.outbox is not None
        if root not in self._thread_issues:
            if len(self._thread_issues) > THREADS_REMEMBERED_MAX:
                self._thread_issues.clear()
            message = self.outbox.clients[QUEEN].event(self.room_id, root)
            self._thread_issues[root] = None if message is None else issue_of(message.body)
        return self._thread_issues[root]
