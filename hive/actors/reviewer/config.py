"""The reviewer's configuration (DESIGN 10, 11): its agent, clocks and bounds, its
failure floor, and the keys, launch and prices a model reviewer runs with."""

from __future__ import annotations

from dataclasses import dataclass, field

from hive.actors.bee.ending import Accounting
from hive.agents.launch import Launch
from hive.rules.keys import KeySlot
from hive.rules.rests import QUOTA_REST_SECONDS
from hive.rules.review_failures import REVIEW_FAILURES_MAX
from hive.rules.reviewer import REVIEW_ROW_SECONDS, REVIEWER_TICK_SECONDS, WAIT_PAUSE_START_SECONDS


@dataclass(frozen=True)
class ReviewerConfig:
    agent: str = "demo"
    tick_seconds: float = float(REVIEWER_TICK_SECONDS)
    bound_seconds: float = float(REVIEW_ROW_SECONDS)
    key_lanes: int = 1
    review_memory_mb: int | None = None
    # reviews run only while this holder has the Queen lease (None: always, for tests)
    holder: str | None = None
    failures_max: int = REVIEW_FAILURES_MAX
    # the first pause after a failed review; it doubles for each failure after it
    failure_pause_seconds: int = WAIT_PAUSE_START_SECONDS
    # the keys a review may run on (its attempt's own), the variable a command reads
    # one from, how agents are launched, and how a review's usage is priced
    keys: tuple[KeySlot, ...] = ()
    key_env: str = "HIVE_KEY"
    launch: Launch = field(default_factory=Launch)
    accounting: Accounting = field(default_factory=Accounting)
    quota_rest_seconds: int = QUOTA_REST_SECONDS
