"""The board's header (DESIGN 11): throughput (merges per hour over the last day), the
UTC day's spend, and the runners with their slots and the keys resting. Read from the
store; `hive.board.render` draws it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta

from hive.rules.spend import day_start
from hive.store import board, keyrests, runners, spend
from hive.store.db import Db

THROUGHPUT_HOURS = 24  # merges per hour are counted over this window
# a runner not seen for this long is left off the header (`hive status` lists it)
RUNNER_SHOWN_SECONDS = 600


@dataclass(frozen=True)
class RunnerSeen:
    name: str
    slots: int
    running: int
    draining: bool


@dataclass(frozen=True)
class Pulse:
    merged: int  # merges in the last THROUGHPUT_HOURS
    spend_today_usd: float
    unpriced: int  # attempts today whose cost is unknown: the spend is a floor
    runners: tuple[RunnerSeen, ...]
    keys: int
    keys_resting: int

    @property
    def merged_per_hour(self) -> float:
        return self.merged / THROUGHPUT_HOURS


def pulse(db: Db, keys: Mapping[int, str], now: datetime) -> Pulse:
    """The header's figures at `now`; `keys` maps each key index of this process to its
    fingerprint (a rest of another key at an index is not counted)."""
    today = spend.by_key_since(db, day_start(now))
    seen_after = now - timedelta(seconds=RUNNER_SHOWN_SECONDS)
    return Pulse(
        merged=board.merged_since(db, now - timedelta(hours=THROUGHPUT_HOURS)),
        spend_today_usd=sum(k.cost_usd for k in today),
        unpriced=sum(k.unpriced for k in today),
        runners=tuple(
            RunnerSeen(r.name, r.slots, r.running, r.draining)
            for r in runners.listing(db)
            if r.seen_at >= seen_after
        ),
        keys=len(keys),
        keys_resting=len(keyrests.resting(db, keys)),
    )
