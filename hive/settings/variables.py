"""Every `HIVE_` variable the settings read: its field of `Settings` and its parser.

Read once, when `Settings.from_env` builds the settings; `KNOWN` is also what a misspelt
name is matched against.
"""

from __future__ import annotations

from hive.rules.job_slots import LANE_SECONDS_MAX, PUBLISH_JOBS_MAX
from hive.rules.modes import ChatMode, ForgeMode, NetworkMode, PublishMode, Role, SandboxMode
from hive.rules.retention import RETENTION_DAYS_MAX, RETENTION_DAYS_MIN
from hive.rules.startup import STORE_WAIT_MAX_SECONDS
from hive.settings import chat, github, places, values

PREFIX = "HIVE_"
LOG_FORMATS = ("text", "json")
LOG_LEVELS = ("debug", "info", "warning", "error")
DAY_SECONDS = 86400
WEEK_MINUTES = 7 * 24 * 60
RUNNER_NAME_MAX_CHARS = 128
SPEND_CAP_MAX_USD = 1_000_000

# variable suffix -> (field, parser); defaults are the dataclass's. Every number has a
# range: a window of 1e26 minutes overflows PostgreSQL's interval, 1e-300 s is a busy loop.
SPECS: dict[str, tuple[str, values.Parser]] = {
    "DATABASE_URL": ("database_url", places.database_url),
    "LISTEN_URL": ("listen_url", places.database_url),
    "PGDATA": ("pgdata", places.directory),
    "ROLE": ("roles", values.roles(Role)),
    "REPO_URL": ("repo_url", places.optional_text),
    "BASE_REF": ("base_ref", values.base_ref),
    "WORKDIR": ("workdir", places.directory),
    "QUEEN_TICK_SECONDS": ("queen_tick_seconds", values.decimal(0.1, 86400)),
    "QUEEN_BEES_RUN_ELSEWHERE": ("queen_bees_run_elsewhere", values.switch),
    "MAX_WORKERS": ("max_workers", values.integer(1, 1024)),
    "RUNNER_SECONDS": ("runner_seconds", values.decimal(0.1, 3600)),
    "RUNNER_SLOTS": ("runner_slots", values.integer(1, 64)),
    "RUNNER_NAME": ("runner_name", values.line(RUNNER_NAME_MAX_CHARS)),
    "RUNNER_DRAIN_SECONDS": ("runner_drain_seconds", values.integer(0, DAY_SECONDS)),
    "PLATFORM_DRAIN_SECONDS": ("platform_drain_seconds", values.integer(0, DAY_SECONDS)),
    "RUNNER_SILENT_MINUTES": ("runner_silent_minutes", values.decimal(0.01, WEEK_MINUTES)),
    # whole minutes: the outcome `reaped: no completion within N minutes` names them
    "STALL_MINUTES": ("stall_minutes", values.integer(1, WEEK_MINUTES)),
    "TURN_MAX_SECONDS": ("turn_max_seconds", values.integer(1, DAY_SECONDS)),
    "BEE_MEMORY_MB": ("bee_memory_mb", values.integer(0, 1024 * 1024)),
    "AGENT": ("agent", values.agent),
    "AGENT_BIN": ("agent_bin", values.line(values.PATH_MAX_BYTES)),
    "AGENT_PASS_ENV": ("agent_pass_env", values.pass_env),
    "AGENT_USER": ("agent_user", values.user),
    "AGENT_SANDBOX": ("agent_sandbox", values.mode(SandboxMode)),
    "AGENT_SANDBOX_PATHS": ("agent_sandbox_paths", places.absolute_paths),
    "AGENT_NETWORK": ("agent_network", values.mode(NetworkMode)),
    "AGENT_ALLOW_HOSTS": ("agent_allow_hosts", places.host_ports),
    "WORKER_PROVIDER": ("worker_provider", values.provider),
    "WORKER_MODEL": ("worker_model", values.line()),
    "WORKER_LANES_PER_KEY": ("worker_lanes_per_key", values.integer(1, 4)),
    "KEY_ENV": ("key_env", values.env_name),
    "HTTP_ADDR": ("http_addr", places.http_addr),
    "API_TOKEN": ("api_token", values.token),
    "BOARD_PUBLIC": ("board_public", values.switch),
    "LOG_FORMAT": ("log_format", values.choice(LOG_FORMATS)),
    "LOG_LEVEL": ("log_level", values.choice(LOG_LEVELS)),
    # a bundle is one bytea value, and PostgreSQL caps one at 1 GiB
    "BUNDLE_MAX_BYTES": ("bundle_max_bytes", values.integer(1, 1024**3)),
    "MERGE_TEXT_MAX_BYTES": ("merge_text_max_bytes", values.integer(1, 1024**3)),
    "CLONE_DEPTH": ("clone_depth", values.integer(0, 2**31 - 1)),
    "REVIEWER_AGENT": ("reviewer_agent", values.agent),
    "REVIEW_FAILURES_MAX": ("review_failures_max", values.integer(1, 100)),
    "REVIEW_MAX_SECONDS": ("review_max_seconds", values.integer(1, DAY_SECONDS)),
    "SHAPER_AGENT": ("shaper_agent", values.shaper),
    "SHAPE": ("shape", values.choice(("ask", "apply"))),
    "CHECKS_TIMEOUT_SECONDS": ("checks_timeout_seconds", values.integer(1, DAY_SECONDS)),
    "JOB_CLAIM_SECONDS": ("job_claim_seconds", values.integer(2, 3600)),
    "PUBLISH_JOBS": ("publish_jobs", values.integer(1, PUBLISH_JOBS_MAX)),
    "PUBLISH_LANE_SECONDS": ("publish_lane_seconds", values.integer(0, LANE_SECONDS_MAX)),
    "STORE_WAIT_SECONDS": ("store_wait_seconds", values.integer(0, STORE_WAIT_MAX_SECONDS)),
    "PUBLISH": ("publish", values.mode(PublishMode)),
    "FORGE": ("forge", values.mode(ForgeMode)),
    "GITHUB_REPO": ("github_repo", github.repo),
    "GITHUB_TOKEN": ("github_token", values.token),
    "GITHUB_API_URL": ("github_api_url", github.api_url),
    "GITHUB_LABEL": ("github_label", github.label),
    "GITHUB_WEBHOOK_SECRET": ("github_webhook_secret", github.secret),
    "GITHUB_MERGE_METHOD": ("github_merge_method", values.choice(github.MERGE_METHODS)),
    "GITHUB_POLL_SECONDS": ("github_poll_seconds", values.decimal(0.1, DAY_SECONDS)),
    "GITHUB_PARK_MINUTES": ("github_park_minutes", values.decimal(0.05, WEEK_MINUTES)),
    "GITHUB_TIMEOUT_SECONDS": ("github_timeout_seconds", values.decimal(0.5, 600)),
    "SPEND_CAP_USD": ("spend_cap_usd", values.decimal(0, SPEND_CAP_MAX_USD)),
    "PRICES_FILE": ("prices_file", places.prices_file),
    "QUOTA_REST_SECONDS": ("quota_rest_seconds", values.integer(1, 7 * DAY_SECONDS)),
    "RETENTION_DAYS": (
        "retention_days",
        values.integer(RETENTION_DAYS_MIN, RETENTION_DAYS_MAX),
    ),
    "CREDITS": ("credits", values.switch),
    "CREDIT_BURN_DAYS": ("credit_burn_days", values.exact("0.000001", "3650")),
    "CREDIT_MARKUP": ("credit_markup", values.exact("1", "100")),
    "CREDIT_DEFAULT_ACCOUNT": ("credit_default_account", values.account),
    "WORKER_KEY_OWNERS": ("worker_key_owners", values.key_owners),
    "CHAT": ("chat", values.mode(ChatMode)),
    "MATRIX_URL": ("matrix_url", chat.url),
    "MATRIX_ROOM": ("matrix_room", chat.room),
    "MATRIX_TOKEN_QUEEN": ("matrix_token_queen", chat.token),
    "MATRIX_TOKEN_REVIEWER": ("matrix_token_reviewer", chat.token),
    "CHAT_GAP_SECONDS": ("chat_gap_seconds", values.decimal(0, chat.GAP_SECONDS_MAX)),
    "CHAT_ROOM_PER_MINUTE": (
        "chat_room_per_minute",
        values.integer(1, chat.ROOM_PER_MINUTE_MAX),
    ),
}
KNOWN = frozenset(PREFIX + s for s in SPECS) | {"HIVE_WORKER_KEY"}
