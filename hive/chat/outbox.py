"""The outbox's sender: the rows the clocks let go now, each under its own Matrix
transaction id, so one sent again after a crash (sent, not yet marked) posts nothing new.

`send_due` asks `hive.rules.chat.next_turn` with the store's clock and the sends of the
last minute (every process reads the same memory, a restarted Queen included), drops
what waited past its bound, sends one row at a time, and returns the seconds until the
clocks may let the next one go (0: nothing waits).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from hive.chat.matrix import DEPTH_KEY, MatrixClient, MatrixError
from hive.metrics import HiveMetrics
from hive.rules.chat import WINDOW_SECONDS, Clocks, Pending, next_turn
from hive.store import chat as store
from hive.store.db import Db

log = logging.getLogger("hive.chat")

SENDS_PER_PASS_MAX = 50  # a pass sends at most this many before it syncs again
HELD_REMEMBERED_MAX = 10_000  # held rows remembered (each counted once)


@dataclass
class Sent:
    sent: int = 0
    dropped: int = 0
    wait_seconds: float = 0.0
    failed: MatrixError | None = None  # the homeserver refused or was away: try later


def txn_id(row_id: int) -> str:
    return f"hive-outbox-{row_id}"


def content_of(row: store.Row) -> dict[str, Any]:
    """The Matrix content of a row: its text, its chain depth, a reply to the message it
    answers (in that message's thread when it was in one)."""
    owed = row.owed
    content: dict[str, Any] = {"msgtype": "m.text", "body": owed.body or "", DEPTH_KEY: owed.depth}
    if owed.reply_to is not None:
        reply = {"m.in_reply_to": {"event_id": owed.reply_to}}
        if owed.thread_root is not None:
            content["m.relates_to"] = {
                "rel_type": "m.thread",
                "event_id": owed.thread_root,
                "is_falling_back": True,
                **reply,
            }
        else:
            content["m.relates_to"] = reply
    return content


@dataclass
class Outbox:
    """Sends the room's owed rows as the bots (`clients` by bot name) into `room_id`."""

    db: Db
    clients: Mapping[str, MatrixClient]
    room_id: str
    clocks: Clocks
    metrics: HiveMetrics
    # called once a row is sent and marked (tests pause here)
    after_send: Callable[[int], None] = lambda row_id: None
    _held: set[int] = field(default_factory=set)

    def send_due(self) -> Sent:
        done = Sent()
        for _ in range(SENDS_PER_PASS_MAX):
            rows, now = store.waiting(self.db)
            if now is None:
                return done
            memory = max(WINDOW_SECONDS, self.clocks.gap_seconds)
            sends = store.sends_since(self.db, memory)
            last: dict[str, float] = {}
            for bot, at in sends:
                last[bot] = at
            by_id = {r.id: r for r in rows}
            pending = [Pending(r.id, r.owed.bot, r.owed.kind, r.since) for r in rows]
            turn = next_turn(pending, now, last, [at for _, at in sends], self.clocks)
            for held in turn.drop:
                if store.drop(self.db, held.id, "held by the clocks past its bound"):
                    done.dropped += 1
                    self.metrics.chat_dropped.labels(kind=held.kind.name.lower()).inc()
                    log.warning(
                        "chat: row %d of %s dropped: held past its bound", held.id, held.bot
                    )
            if turn.send is None:
                self._count_held(pending, turn.drop)
                done.wait_seconds = turn.wait_seconds
                return done
            row = by_id[turn.send.id]
            if not self._send(row, done):
                return done
        return done

    def _send(self, row: store.Row, done: Sent) -> bool:
        client = self.clients.get(row.owed.bot)
        if client is None:
            # a bot whose token is gone from the settings: its row can never go
            store.drop(self.db, row.id, f"no token for the bot {row.owed.bot}")
            done.dropped += 1
            self.metrics.chat_dropped.labels(kind=row.owed.kind.name.lower()).inc()
            return True
        try:
            event_id = client.send(self.room_id, txn_id(row.id), content_of(row))
        except MatrixError as err:
            if err.status in (0, 429) or err.status >= 500:
                done.failed = err  # away or busy: the row waits for the next pass
                return False
            store.drop(self.db, row.id, f"refused by the homeserver: {err.status} {err.errcode}")
            done.dropped += 1
            self.metrics.chat_dropped.labels(kind=row.owed.kind.name.lower()).inc()
            log.warning("chat: row %d of %s dropped: %s", row.id, row.owed.bot, err)
            return True
        marked, seconds = store.sent(self.db, row.id, event_id)
        self._held.discard(row.id)
        if marked:
            done.sent += 1
            self.metrics.chat_messages.labels(kind=row.owed.kind.name.lower()).inc()
            if seconds is not None:
                self.metrics.chat_answer_seconds.observe(max(0.0, seconds))
        self.after_send(row.id)
        return True

    def _count_held(self, pending: list[Pending], dropped: tuple[Pending, ...]) -> None:
        """Count each row the clocks hold back, once."""
        if len(self._held) > HELD_REMEMBERED_MAX:
            self._held.clear()
        for p in pending:
            if p not in dropped and p.id not in self._held:
                self._held.add(p.id)
                self.metrics.chat_held.labels(kind=p.kind.name.lower()).inc()
