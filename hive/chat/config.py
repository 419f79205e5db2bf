"""The chat's own config (made from the settings by `hive.configs.chat`): the homeserver,
the room, one token per bot, the clocks."""

from __future__ import annotations

from dataclasses import dataclass, field

from hive.rules.chat import Clocks
from hive.rules.credits import Terms

QUEEN = "queen"
REVIEWER = "reviewer"
SHAPER = "shaper"
STORE_BOTS = (QUEEN, REVIEWER, SHAPER)  # the bots that answer from the store
MOVES_EVERY_SECONDS = 2.0  # how often the store is read for moves to post
SYNC_WAIT_SECONDS = 1.0  # a sync waits this long for a message (a stop is seen within it)


@dataclass(frozen=True)
class BotToken:
    name: str  # queen, reviewer, shaper, or an agent's (a bee's bot)
    token: str = field(repr=False)

    @property
    def is_bee(self) -> bool:
        return self.name not in STORE_BOTS


@dataclass(frozen=True)
class ChatConfig:
    url: str
    room: str
    bots: tuple[BotToken, ...]
    clocks: Clocks = field(default_factory=Clocks)
    sync_wait_seconds: float = SYNC_WAIT_SECONDS
    spend_cap_usd: float = 0.0  # the day's cap, whose reach the Queen posts (0: none)
    moves_every_seconds: float = MOVES_EVERY_SECONDS
    credits: Terms | None = None  # HIVE_CREDITS=on: a bee's turn needs its issue's credit
