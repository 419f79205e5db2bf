"""The reviewer's configuration (DESIGN 10, 11): its agent, clocks and bounds, its
failure floor, and the keys, launch and prices a model reviewer runs with."""

from __future__ import annotations

from dataclasses import dataclass, field

from hive.actors.ending import Accounting
from hive.agents.launch import Launch
from hive.rules.keys import KeySlot, key_slots
from hive.rules.rests import QUOTA_REST_SECONDS
from hive.rules.review_failures import REVIEW_FAILURES_MAX
from hive.rules.reviewer import REVIEW_ROW_SECONDS, REVIEWER_TICK_SECONDS, WAIT_PAUSE_START_SECONDS
from hive.settings import Settings


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

    @classmethod
    def from_settings(cls, settings: Settings) -> ReviewerConfig:
        """The reviewer's own clock is RULES 8's 10 s, or the Queen's tick when shorter
        (tests run with short clocks), and so is a failed review's first pause (30 s, or
        the tick's whole seconds); a review needs what a bee needs."""
        tick = settings.queen_tick_seconds
        return cls(
            agent=settings.reviewer_agent,
            tick_seconds=min(float(REVIEWER_TICK_SECONDS), tick),
            bound_seconds=float(settings.review_max_seconds),
            key_lanes=max(1, len(settings.worker_keys) * settings.worker_lanes_per_key),
            review_memory_mb=settings.bee_memory_mb or None,
            holder=settings.runner_name,
            failures_max=settings.review_failures_max,
            failure_pause_seconds=max(1, min(WAIT_PAUSE_START_SECONDS, int(tick))),
            keys=key_slots(settings.worker_keys),
            key_env=settings.key_env,
            launch=reviewer_launch(settings),
            accounting=Accounting.from_settings(settings),
            quota_rest_seconds=settings.quota_rest_seconds,
        )


def reviewer_launch(settings: Settings) -> Launch:
    """How a reviewer is launched: as the bees' agents are, with HIVE_AGENT_BIN only when
    the reviewer is the bees' agent (another CLI is found on PATH)."""
    same = settings.reviewer_agent == settings.agent
    return Launch(settings.agent_pass_env, settings.agent_user, settings.agent_bin if same else "")
