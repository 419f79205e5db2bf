"""The one door configuration enters by: `Settings.from_env(environ)`.

Every `HIVE_` variable is read here and nowhere else. All problems are collected and
reported together (one line each, naming the variable, the bad value and what is
allowed), and a `HIVE_` name that is not ours is an error with the nearest valid name,
so a typo never falls back to a default in silence.
"""

from __future__ import annotations

import difflib
import os
import re
import socket
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

from hive.rules.chat import GAP_SECONDS_DEFAULT, ROOM_PER_MINUTE_DEFAULT
from hive.rules.credits import BURN_DAYS_DEFAULT, DEFAULT_ACCOUNT, MARKUP_DEFAULT
from hive.rules.job_slots import (
    LANE_SECONDS_DEFAULT,
    LANE_SECONDS_MAX,
    PUBLISH_JOBS_DEFAULT,
    PUBLISH_JOBS_MAX,
)
from hive.rules.modes import ChatMode, ForgeMode, NetworkMode, PublishMode, Role, SandboxMode
from hive.rules.pull_waits import PARK_MINUTES_DEFAULT
from hive.rules.retention import RETENTION_DAYS_DEFAULT, RETENTION_DAYS_MAX, RETENTION_DAYS_MIN
from hive.rules.startup import STORE_WAIT_DEFAULT_SECONDS, STORE_WAIT_MAX_SECONDS
from hive.rules.waits import CLAIM_TTL_SECONDS
from hive.settings import chat, github, values
from hive.settings.links import is_service_link

__all__ = ["KNOWN", "PREFIX", "Settings", "SettingsError", "is_service_link"]

PREFIX = "HIVE_"
LOG_FORMATS = ("text", "json")
LOG_LEVELS = ("debug", "info", "warning", "error")
_KEY_RE = re.compile(r"HIVE_WORKER_KEY(?:_([1-9][0-9]*))?")
_CHECK_RE = re.compile(r"HIVE_CHECK_([A-Z0-9][A-Z0-9_]*)")
_NAME_RE = re.compile(r"[A-Za-z0-9_]+")
DAY_SECONDS = 86400
WEEK_MINUTES = 7 * 24 * 60
RUNNER_NAME_MAX_CHARS = 128
SPEND_CAP_MAX_USD = 1_000_000

# Variables a bee's agent receives (DESIGN 6). A `hive` command run inside a bee sees
# them; they are the agent's, not configuration, so they are neither read nor refused.
AGENT_SIDE = frozenset(
    {"HIVE_ISSUE", "HIVE_BOUNDARY", "HIVE_BRANCH", "HIVE_BRIEF_FILE", "HIVE_KEY"}
)


class SettingsError(ValueError):
    """Every bad variable at once; `str()` is one line per problem."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("\n".join(problems))


@dataclass(frozen=True)
class Settings:
    database_url: str | None = None
    # LISTEN's own URL (None: HIVE_DATABASE_URL): a direct one when that one is PgBouncer's
    listen_url: str | None = field(default=None, repr=False)
    pgdata: Path = Path(".hive/pg")
    roles: frozenset[Role] = frozenset(Role)
    repo_url: str | None = None
    base_ref: str = "main"
    workdir: Path = Path(".hive/work")
    queen_tick_seconds: float = 30.0
    queen_bees_run_elsewhere: bool = False
    max_workers: int = 4
    runner_seconds: float = 15.0
    runner_slots: int = 1
    runner_name: str = ""
    runner_drain_seconds: int = 1800
    platform_drain_seconds: int = 0
    runner_silent_minutes: float = 10.0
    stall_minutes: int = 120
    turn_max_seconds: int = 3600
    bee_memory_mb: int = 1024
    agent: str = "demo"
    # claude or codex: its executable (empty: `claude` or `codex` on PATH)
    agent_bin: str = ""
    # names of variables that reach a turn beside PATH, HOME and LANG (never a HIVE_ one)
    agent_pass_env: tuple[str, ...] = ()
    # the user turns run as (empty: the hive's own user)
    agent_user: str = ""
    # every turn's sandbox: auto (the strongest that works), on (refuse to start
    # without one) or off
    agent_sandbox: SandboxMode = SandboxMode.AUTO
    # read-only paths a sandboxed turn also sees (a toolchain under /opt, a cache)
    agent_sandbox_paths: tuple[str, ...] = ()
    # open, or allow: a turn reaches only agent_allow_hosts, through the runner's proxy
    agent_network: NetworkMode = NetworkMode.OPEN
    agent_allow_hosts: tuple[str, ...] = ()
    # credentials are never printed: a repr of the settings (a traceback, a debug line)
    # would otherwise carry them
    worker_keys: Mapping[str, str] = field(default_factory=dict, repr=False)
    worker_provider: str = "demo"
    worker_model: str = ""
    worker_lanes_per_key: int = 1
    key_env: str = "HIVE_KEY"
    http_addr: str = "127.0.0.1:8080"
    api_token: str | None = field(default=None, repr=False)
    # the read-only board (numbers, titles, ages) at /board without the token
    board_public: bool = False
    log_format: str = "text"
    log_level: str = "info"
    bundle_max_bytes: int = 100 * 1024 * 1024
    merge_text_max_bytes: int = 8 * 1024 * 1024
    clone_depth: int = 0  # commits of base a new clone over the network takes; 0: all
    reviewer_agent: str = "demo"
    # reviews in a row that give no verdict before the work is escalated to a person
    review_failures_max: int = 3
    review_max_seconds: int = 300
    # the shaper of issues that fail the shape gate (off: none), and what its proposal does
    shaper_agent: str = "off"
    shape: str = "ask"
    # (name, shell command) of each HIVE_CHECK_<NAME>, by name
    checks: tuple[tuple[str, str], ...] = ()
    checks_timeout_seconds: int = 1800
    # how long a Queen's claim on a publish job holds before another may take it (RULES
    # 9's CLAIM_TTL_SECONDS; shorter only as a test's clock)
    job_claim_seconds: int = CLAIM_TTL_SECONDS
    # publish jobs a Queen runs side by side (one whose check hangs holds no other)
    publish_jobs: int = PUBLISH_JOBS_DEFAULT
    # pushing into one base, the next publish run goes beside one only after this long
    publish_lane_seconds: int = LANE_SECONDS_DEFAULT
    # how long `hive serve` waits for the store at start before it exits 2
    store_wait_seconds: int = STORE_WAIT_DEFAULT_SECONDS
    publish: PublishMode = PublishMode.PUSH
    forge: ForgeMode = ForgeMode.LOCAL
    github_repo: str = ""
    github_token: str | None = field(default=None, repr=False)
    github_api_url: str = github.DEFAULT_API_URL
    github_label: str = "hive"
    github_webhook_secret: str | None = field(default=None, repr=False)
    github_merge_method: str = "merge"
    # the poll of the labelled issues; a quiet poll is a 304 and costs no rate limit
    github_poll_seconds: float = 60.0
    # how long a publish job may wait on one pull request before the work goes to a person
    github_park_minutes: float = PARK_MINUTES_DEFAULT
    # how long one request to GitHub's API may take before it is given up
    github_timeout_seconds: float = 30.0
    # US dollars a UTC day may spend before new orders stop (0: no cap)
    spend_cap_usd: float = 0.0
    # the price table's file (None: the one the package ships, config/prices.toml)
    prices_file: Path | None = None
    # how long a key rests after a quota refusal whose reset time the agent did not give
    quota_rest_seconds: int = 3600
    # closed issues' transcripts, history and bundles, and round reports, go after this
    retention_days: int = RETENTION_DAYS_DEFAULT
    # credits (hive/rules/credits.py): turns sold to their issue's account
    credits: bool = False
    credit_burn_days: Decimal = BURN_DAYS_DEFAULT
    credit_markup: Decimal = MARKUP_DEFAULT
    credit_default_account: str = DEFAULT_ACCOUNT
    # who lent each key, by key index (lending earns no credit)
    worker_key_owners: tuple[str, ...] = ()
    # the chat (hive/chat): off, or matrix (one bot per agent in HIVE_MATRIX_ROOM)
    chat: ChatMode = ChatMode.OFF
    matrix_url: str = ""
    matrix_room: str = ""
    matrix_token_queen: str = field(default="", repr=False)
    matrix_token_reviewer: str = field(default="", repr=False)
    # (name, token) of each HIVE_MATRIX_TOKEN_<AGENT> beside the Queen's and the reviewer's
    matrix_tokens: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    chat_gap_seconds: float = GAP_SECONDS_DEFAULT
    chat_room_per_minute: int = ROOM_PER_MINUTE_DEFAULT

    @property
    def is_queen(self) -> bool:
        return Role.QUEEN in self.roles

    @property
    def is_runner(self) -> bool:
        return Role.RUNNER in self.roles

    @property
    def http_host(self) -> str:
        return self.http_addr.rsplit(":", 1)[0].strip("[]")

    @property
    def http_port(self) -> int:
        return int(self.http_addr.rsplit(":", 1)[1])

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Build the settings from `environ` (default `os.environ`); raise SettingsError
        listing every problem found."""
        env = dict(os.environ if environ is None else environ)
        reader = _Reader(env)
        found: dict[str, Any] = {spec[0]: reader.read(name, spec) for name, spec in _SPECS.items()}
        found["worker_keys"] = reader.worker_keys()
        found["checks"] = reader.checks()
        found["matrix_tokens"] = chat.agent_tokens(env, reader.seen, reader.problems)
        reader.refuse_secret_passing(found["agent_pass_env"], found)
        if not found["runner_name"]:
            found["runner_name"] = f"{socket.gethostname()}:{os.getpid()}"
        reader.problems += github.problems(found)
        reader.problems += chat.problems(found)
        if found["agent_network"] == NetworkMode.ALLOW and not found["agent_allow_hosts"]:
            reader.problems.append(
                "HIVE_AGENT_NETWORK=allow needs HIVE_AGENT_ALLOW_HOSTS: the host:port pairs "
                "a turn may reach (api.anthropic.com:443, say)"
            )
        if (
            found["agent_network"] == NetworkMode.ALLOW
            and found["agent_sandbox"] == SandboxMode.OFF
        ):
            reader.problems.append(
                "HIVE_AGENT_NETWORK=allow needs a sandbox: HIVE_AGENT_SANDBOX is off"
            )
        reader.refuse_unknown()
        if reader.problems:
            raise SettingsError(reader.problems)
        return cls(**found)


# variable suffix -> (field, parser); defaults are the dataclass's. Every number has a
# range: a window of 1e26 minutes overflows PostgreSQL's interval, 1e-300 s is a busy loop.
_SPECS: dict[str, tuple[str, values.Parser]] = {
    "DATABASE_URL": ("database_url", values.database_url),
    "LISTEN_URL": ("listen_url", values.database_url),
    "PGDATA": ("pgdata", values.directory),
    "ROLE": ("roles", values.roles(Role)),
    "REPO_URL": ("repo_url", values.optional_text),
    "BASE_REF": ("base_ref", values.base_ref),
    "WORKDIR": ("workdir", values.directory),
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
    "AGENT_SANDBOX_PATHS": ("agent_sandbox_paths", values.absolute_paths),
    "AGENT_NETWORK": ("agent_network", values.mode(NetworkMode)),
    "AGENT_ALLOW_HOSTS": ("agent_allow_hosts", values.host_ports),
    "WORKER_PROVIDER": ("worker_provider", values.provider),
    "WORKER_MODEL": ("worker_model", values.line()),
    "WORKER_LANES_PER_KEY": ("worker_lanes_per_key", values.integer(1, 4)),
    "KEY_ENV": ("key_env", values.env_name),
    "HTTP_ADDR": ("http_addr", values.http_addr),
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
    "PRICES_FILE": ("prices_file", values.prices_file),
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
_FIELD_DEFAULTS = {f: getattr(Settings, f, None) for f, _ in _SPECS.values()}
KNOWN = frozenset(PREFIX + s for s in _SPECS) | {"HIVE_WORKER_KEY"}
# Their values are shown as <hidden>: a password, a token.
SECRET_VARIABLES = frozenset(
    {
        "HIVE_DATABASE_URL",
        "HIVE_LISTEN_URL",
        "HIVE_API_TOKEN",
        "HIVE_GITHUB_TOKEN",
        "HIVE_GITHUB_WEBHOOK_SECRET",
        "HIVE_MATRIX_TOKEN_QUEEN",
        "HIVE_MATRIX_TOKEN_REVIEWER",
    }
)
SHOWN_MAX_CHARS = 80


class _Reader:
    def __init__(self, env: dict[str, str]) -> None:
        self.env = env
        self.problems: list[str] = []
        self.seen: set[str] = set()

    def read(self, suffix: str, spec: tuple[str, values.Parser]) -> Any:
        name = PREFIX + suffix
        field_name, parse = spec
        default = _FIELD_DEFAULTS[field_name]
        self.seen.add(name)
        if name not in self.env:
            return default
        raw = self.env[name]
        try:
            return parse(_plain(raw))
        except ValueError as allowed:
            self.problems.append(f"{name}={_shown(name, raw)} is not allowed: expected {allowed}")
            return default

    def worker_keys(self) -> dict[str, str]:
        keys = {}
        for name, value in sorted(self.env.items()):
            match = _KEY_RE.fullmatch(name)
            if match is None:
                continue
            self.seen.add(name)
            if match.group(1) == "1":
                self.problems.append(
                    f"{name} is not a key variable: the first key is HIVE_WORKER_KEY, "
                    "the second HIVE_WORKER_KEY_2"
                )
                continue
            # an empty key is skipped (RULES 7); any other must be one a client can send
            if value.strip() and not values.is_token(value.strip()):
                self.problems.append(
                    f"{name}=<hidden> is not allowed: expected printable ASCII without spaces"
                )
                continue
            keys[name] = value
        return keys

    def checks(self) -> tuple[tuple[str, str], ...]:
        found = []
        for name, value in sorted(self.env.items()):
            match = _CHECK_RE.fullmatch(name)
            if match is None:
                continue
            self.seen.add(name)
            try:
                command = _plain(value)
            except ValueError as allowed:
                self.problems.append(f"{name}={_shown(name, value)} is not allowed: {allowed}")
                continue
            if not command.strip():
                self.problems.append(f"{name}='' is not allowed: expected a shell command")
                continue
            found.append((match.group(1).lower(), command))
        return tuple(found)

    def refuse_secret_passing(self, names: tuple[str, ...], found: Mapping[str, Any]) -> None:
        """A variable HIVE_AGENT_PASS_ENV names must not hold the database URL or the
        API token under another name."""
        secrets = {
            "the database URL": found.get("database_url"),
            "the LISTEN URL": found.get("listen_url"),
            "the API token": found.get("api_token"),
            "the GitHub token": found.get("github_token"),
            "the webhook secret": found.get("github_webhook_secret"),
        }
        for name in names:
            for what, secret in secrets.items():
                if secret and self.env.get(name) == secret:
                    self.problems.append(
                        f"HIVE_AGENT_PASS_ENV names {name}, which holds {what}: "
                        "it never reaches a turn"
                    )

    def refuse_unknown(self) -> None:
        for name in sorted(self.env):
            if not name.startswith(PREFIX) or name in self.seen or name in AGENT_SIDE:
                continue
            if is_service_link(name, self.env):
                continue
            if not _NAME_RE.fullmatch(name):
                self.problems.append(f"{name!r} is not a hive variable (letters, digits, _)")
                continue
            guess = difflib.get_close_matches(name, sorted(KNOWN), n=1, cutoff=0.6)
            hint = f" (did you mean {guess[0]}?)" if guess else ""
            if name.startswith("HIVE_WORKER_KEY_"):
                hint = " (key variables are HIVE_WORKER_KEY, HIVE_WORKER_KEY_2, _3, ...)"
            self.problems.append(f"{name} is not a hive variable{hint}")


def _plain(raw: str) -> str:
    """`raw` when it can be stored and logged: no NUL, and text in UTF-8 (an environment
    may carry bytes that are neither: Python keeps them as lone surrogates)."""
    if "\x00" in raw:
        raise ValueError("a value without a NUL character")
    try:
        raw.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("text in UTF-8") from None
    return raw


def _shown(name: str, raw: str) -> str:
    """The value as a message shows it: never a secret, escaped, and cut when long."""
    if name in SECRET_VARIABLES:
        return "<hidden>"
    if len(raw) > SHOWN_MAX_CHARS:
        return repr(raw[:SHOWN_MAX_CHARS]) + "..."
    return repr(raw)
