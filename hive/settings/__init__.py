"""The one door configuration enters by: `Settings.from_env(environ)`.

Every `HIVE_` variable is read here and nowhere else. All problems are collected and
reported together (one line each, naming the variable, the bad value and what is
allowed), and a `HIVE_` name that is not ours is an error with the nearest valid name,
so a typo never falls back to a default in silence.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

from hive.rules.chat import GAP_SECONDS_DEFAULT, ROOM_PER_MINUTE_DEFAULT
from hive.rules.credits import BURN_DAYS_DEFAULT, DEFAULT_ACCOUNT, MARKUP_DEFAULT
from hive.rules.job_slots import LANE_SECONDS_DEFAULT, PUBLISH_JOBS_DEFAULT
from hive.rules.modes import ChatMode, ForgeMode, NetworkMode, PublishMode, Role, SandboxMode
from hive.rules.pull_waits import PARK_MINUTES_DEFAULT
from hive.rules.retention import RETENTION_DAYS_DEFAULT
from hive.rules.startup import STORE_WAIT_DEFAULT_SECONDS
from hive.rules.waits import CLAIM_TTL_SECONDS
from hive.settings import chat, github
from hive.settings.links import is_service_link
from hive.settings.reader import Reader
from hive.settings.variables import KNOWN, PREFIX, SPECS

__all__ = ["KNOWN", "PREFIX", "Settings", "SettingsError", "is_service_link"]


class SettingsError(ValueError):
    """Every bad variable at once; `str()` is one line per problem."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("\n".join(problems))


@dataclass(frozen=True)
class Settings:
    """The hive's configuration, a field per `HIVE_` variable. Built once at start by
    `from_env`; hive/configs.py turns it into each component's own small config."""

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
        reader = Reader(env, _FIELD_DEFAULTS)
        found: dict[str, Any] = {spec[0]: reader.read(name, spec) for name, spec in SPECS.items()}
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


_FIELD_DEFAULTS = {f: getattr(Settings, f, None) for f, _ in SPECS.values()}
