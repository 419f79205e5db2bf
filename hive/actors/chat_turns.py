"""The bee's bots' turns (DESIGN 11, agents among themselves): `hive.chat.turns.ChatTurns`
one pass after another, in a process that runs bees. A pass claims one owed answer and
runs its turn; the loop wakes on `hive_chat` (a row owed or let go) and polls.
"""

from __future__ import annotations

from hive.actors.loop import LoopActor
from hive.chat.turns import ChatTurns
from hive.store.chat_turns import CHAT_CHANNEL
from supervisors import Registry

CHAT_TURNS = "chat-turns"
POLL_SECONDS = 5.0  # a NOTIFY is only a hint: the table is looked at this often anyway


class ChatTurnsActor(LoopActor):
    """Known as "chat-turns". A pass that answered looks again at once (more may wait).
    Stopping waits a little for the turn in hand (the loop's join), then stops it and
    lets its row go (`ChatTurns.close`): another process runs it again."""

    def __init__(
        self, turns: ChatTurns, registry: Registry, listen_url: str | None, poll_seconds: float
    ) -> None:
        super().__init__(
            CHAT_TURNS,
            turns,
            poll_seconds,
            registry=registry,
            listen_url=listen_url,
            listen_channels=(CHAT_CHANNEL,),
        )
        self._turns = turns

    def next_wait(self) -> float:
        return 0.0 if self._turns.answered_last else super().next_wait()
