"""Each actor's config, read from the settings. `hive/tree.py` calls these when it wires
the tree; no actor reads the settings itself (an import contract holds it).

Each function is pure: it reads `Settings` and returns a frozen config. A raise is a
setting that cannot work (`HiveError`, with the variable's name).
"""

from __future__ import annotations

from hive import prices
from hive.actors.bee.config import BeeConfig
from hive.actors.bee.ending import Accounting
from hive.actors.bee.start import StartConfig
from hive.actors.drain import DrainConfig
from hive.actors.jobrunner import JobRunnerConfig
from hive.actors.queen.config import QueenConfig
from hive.actors.reaper.reaper import ReaperConfig
from hive.actors.retention import RetentionConfig
from hive.actors.reviewer.config import ReviewerConfig
from hive.actors.runner import ClaimerConfig
from hive.agents.launch import Launch
from hive.chat.config import QUEEN, REVIEWER, BotToken, ChatConfig
from hive.chat.turns import TurnsConfig
from hive.errors import HiveError
from hive.jobs.publish import PublishConfig
from hive.rules.chat import Clocks
from hive.rules.chat_turn import TURN_SECONDS
from hive.rules.credits import Terms
from hive.rules.drain import drain_cap_seconds
from hive.rules.fence import turn_fence_seconds
from hive.rules.keys import key_slots
from hive.rules.modes import ChatMode, PublishMode
from hive.rules.reviewer import REVIEWER_TICK_SECONDS, WAIT_PAUSE_START_SECONDS
from hive.rules.waits import SCHEDULER_POLL_SECONDS
from hive.settings import Settings


def credit_terms(settings: Settings) -> Terms | None:
    """How this hive sells turns (None: HIVE_CREDITS is off)."""
    if not settings.credits:
        return None
    return Terms(
        settings.credit_markup,
        settings.credit_burn_days,
        settings.credit_default_account,
        settings.worker_key_owners,
    )


def accounting(settings: Settings) -> Accounting:
    """How an ending is priced and rests its key."""
    return Accounting(
        prices.load(settings.prices_file),
        settings.worker_provider,
        settings.worker_model or None,
        settings.quota_rest_seconds,
    )


def start_config(settings: Settings) -> StartConfig:
    return StartConfig(
        agent=settings.agent,
        key_env=settings.key_env,
        turn_max_seconds=float(settings.turn_max_seconds),
        repo_url=settings.repo_url,
        launch=Launch(settings.agent_pass_env, settings.agent_user, settings.agent_bin),
    )


def bee_config(settings: Settings) -> BeeConfig:
    return BeeConfig(
        start_config(settings),
        heartbeat_seconds=settings.runner_seconds,
        bundle_max_bytes=settings.bundle_max_bytes,
        fence_seconds=turn_fence_seconds(
            settings.runner_silent_minutes * 60, settings.runner_seconds
        ),
        accounting=accounting(settings),
    )


def claimer_config(settings: Settings) -> ClaimerConfig:
    return ClaimerConfig(
        name=settings.runner_name,
        bee=bee_config(settings),
        slots=settings.runner_slots,
        bee_memory_mb=settings.bee_memory_mb,
        poll_seconds=settings.runner_seconds,
        keys=key_slots(settings.worker_keys),
    )


def queen_config(settings: Settings) -> QueenConfig:
    return QueenConfig(
        keys=key_slots(settings.worker_keys),
        repo_url=settings.repo_url,
        bee=bee_config(settings),
        holder=settings.runner_name,
        tick_seconds=settings.queen_tick_seconds,
        elsewhere=settings.queen_bees_run_elsewhere,
        max_workers=settings.max_workers,
        lanes_per_key=settings.worker_lanes_per_key,
        bee_memory_mb=settings.bee_memory_mb,
        provider=settings.worker_provider,
        model=settings.worker_model,
        spend_cap_usd=settings.spend_cap_usd,
        credits=credit_terms(settings),
    )


def reaper_config(settings: Settings) -> ReaperConfig:
    return ReaperConfig(
        boot=settings.is_queen,
        stall=settings.is_queen,
        silent_minutes=settings.runner_silent_minutes,
        stall_minutes=settings.stall_minutes,
    )


def drain_config(settings: Settings) -> DrainConfig:
    cap = drain_cap_seconds(settings.runner_drain_seconds, settings.platform_drain_seconds)
    return DrainConfig(cap_seconds=cap)


def retention_config(settings: Settings) -> RetentionConfig:
    return RetentionConfig(days=settings.retention_days)


def jobs_config(settings: Settings) -> JobRunnerConfig:
    """RULES 9's 15 s poll, or the Queen's tick when shorter (short clocks in tests)."""
    poll = min(float(SCHEDULER_POLL_SECONDS), settings.queen_tick_seconds)
    return JobRunnerConfig(
        holder=settings.runner_name,
        poll_seconds=poll,
        claim_seconds=float(settings.job_claim_seconds),
        publish=settings.publish,
        slots=settings.publish_jobs,
        # every push into one base runs the checks beside it again: one run at a time
        lane_seconds=float(settings.publish_lane_seconds)
        if settings.publish == PublishMode.PUSH
        else 0.0,
    )


def publish_config(settings: Settings) -> PublishConfig:
    """Raises HiveError without HIVE_REPO_URL: there is nothing to merge into."""
    if not settings.repo_url:
        raise HiveError("publishing needs HIVE_REPO_URL: the repository to merge into")
    return PublishConfig(
        repo_url=settings.repo_url,
        base=settings.base_ref,
        checks=settings.checks,
        checks_timeout_seconds=float(settings.checks_timeout_seconds),
        merge_text_max_bytes=settings.merge_text_max_bytes,
    )


def reviewer_launch(settings: Settings) -> Launch:
    """How a reviewer is launched: as the bees' agents are, with HIVE_AGENT_BIN only when
    the reviewer is the bees' agent (another CLI is found on PATH)."""
    same = settings.reviewer_agent == settings.agent
    return Launch(settings.agent_pass_env, settings.agent_user, settings.agent_bin if same else "")


def reviewer_config(settings: Settings) -> ReviewerConfig:
    """The reviewer's own clock is RULES 8's 10 s, or the Queen's tick when shorter
    (tests run with short clocks), and so is a failed review's first pause (30 s, or the
    tick's whole seconds). A review needs what a bee needs."""
    tick = settings.queen_tick_seconds
    return ReviewerConfig(
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
        accounting=accounting(settings),
        quota_rest_seconds=settings.quota_rest_seconds,
    )


def chat(settings: Settings) -> ChatConfig | None:
    """The chat's room and bots (None: HIVE_CHAT is off)."""
    if settings.chat != ChatMode.MATRIX:
        return None
    bots = [BotToken(QUEEN, settings.matrix_token_queen)]
    if settings.matrix_token_reviewer:
        bots.append(BotToken(REVIEWER, settings.matrix_token_reviewer))
    bots += [BotToken(name, token) for name, token in settings.matrix_tokens]
    clocks = Clocks(settings.chat_gap_seconds, settings.chat_room_per_minute)
    return ChatConfig(
        settings.matrix_url,
        settings.matrix_room,
        tuple(bots),
        clocks,
        spend_cap_usd=settings.spend_cap_usd,
        credits=credit_terms(settings),
    )


def chat_turns(settings: Settings) -> TurnsConfig | None:
    """How a process that runs bees runs the bee's bots' turns (None: HIVE_CHAT is off):
    as its bees, with HIVE_AGENT, the worker keys and the launch, within the turn's bound."""
    if settings.chat != ChatMode.MATRIX:
        return None
    start = start_config(settings)
    return TurnsConfig(
        by=settings.runner_name,
        agent=start.agent,
        key_env=start.key_env,
        keys=key_slots(settings.worker_keys),
        launch=start.launch,
        turn_seconds=min(start.turn_max_seconds, TURN_SECONDS),
        spend_cap_usd=settings.spend_cap_usd,
        credits=credit_terms(settings),
        quota_rest_seconds=settings.quota_rest_seconds,
    )
