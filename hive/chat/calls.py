"""From the room's messages to the rows the bots owe (hive.rules.chat decides who is
called and whether the chain goes on; hive.chat.answers writes what the store's bots say).

Each message that calls a bot owes that bot's answer: one row per (bot, message), made
before anything is sent, so a message read twice (a sync again after a restart) owes
nothing more. A store bot's answer is written now. A bee's bot refuses with a sentence
past the spend cap or at zero credit (hive.rules.chat_turn), and asks for an issue when
none is named; otherwise its row is owed with no body: a process that runs bees claims
it and answers by a short turn that resumes the issue's conversation (hive.chat.turns).
The loop never waits for that turn.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime

from hive.chat import answers
from hive.chat.config import QUEEN, REVIEWER, SHAPER
from hive.chat.matrix import RoomMessage
from hive.rules.chat import Bot, answer_depth, called, calls_further, depth_of, issue_of, kind_of
from hive.rules.chat_turn import NO_ISSUE
from hive.store import chat as store
from hive.store.db import Db

log = logging.getLogger("hive.chat")

# what a store bot answers, by name: (store, issue) -> the answer
STORE_ANSWERS: Mapping[str, Callable[[Db, int | None], answers.Answer]] = {
    QUEEN: answers.queen,
    REVIEWER: answers.reviewer,
    SHAPER: answers.shaper,
}


class Calls:
    """Owes the answers a page of messages calls for. `names` maps each bot's Matrix id
    to its name (queen, reviewer, an agent's); `thread_issue` finds the issue a thread's
    root names (None: none)."""

    def __init__(
        self,
        db: Db,
        bots: Sequence[Bot],
        names: Mapping[str, str],
        thread_issue: Callable[[str], int | None],
        refused: Callable[[int], str | None] = lambda issue: None,
    ) -> None:
        self.db = db
        self.bots = bots
        self.names = names
        self.thread_issue = thread_issue
        self.refused = refused  # why a bee's bot runs no turn for an issue (None: it may)

    def owe(self, message: RoomMessage) -> list[int]:
        """The rows `message` owes (new ones only)."""
        by_person = message.sender not in self.names
        depth = depth_of(by_person, None if by_person else message.depth)
        if not calls_further(depth):
            return []
        ids = called(
            message.body, message.mentions, self.bots, by_person=by_person, sender=message.sender
        )
        if not ids:
            return []
        issue = issue_of(message.body)
        if issue is None and message.thread_root is not None:
            issue = self.thread_issue(message.thread_root)
        asked_at = datetime.fromtimestamp(message.ts_ms / 1000, UTC) if message.ts_ms else None
        owed = []
        for user_id in ids:
            name = self.names[user_id]
            answer = STORE_ANSWERS.get(name)
            body = self._bee(issue) if answer is None else self._said(name, answer, issue)
            row = store.owe(
                self.db,
                store.Owed(
                    cause=f"answer:{name}:{message.event_id}",
                    bot=name,
                    kind=kind_of(by_person),
                    depth=answer_depth(depth),
                    issue=issue,
                    reply_to=message.event_id,
                    thread_root=message.thread_root,
                    asked=message.body,
                    body=body,
                    asked_at=asked_at,
                ),
            )
            if row is not None:
                owed.append(row)
                log.info("chat: %s owes an answer to %s (row %d)", name, message.sender, row)
        return owed

    def _bee(self, issue: int | None) -> str | None:
        """A bee's bot's answer now: the refusal at the spend cap or at zero credit, or
        the question for an issue (None: its turn composes it)."""
        if issue is None:
            return NO_ISSUE
        return self.refused(issue)

    def _said(
        self, name: str, answer: Callable[[Db, int | None], answers.Answer], issue: int | None
    ) -> str:
        """The store bot's answer; a hand-off names the other bot by its Matrix id."""
        said = answer(self.db, issue)
        ids = {n: i for i, n in self.names.items()}
        if said.hand_off is not None and said.hand_off in ids and said.hand_off != name:
            return f"{said.text}\n{ids[said.hand_off]} has it from here."
        return said.text
