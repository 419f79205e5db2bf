"""The one door configuration enters by: `Settings.from_env(environ)`.

Every `HIVE_` variable is read here and nowhere else. All problems are collected and
reported together (one line each, naming the variable, the bad value and what is
allowed), and a `HIVE_` name that is not ours is an error with the nearest valid name,
so a typo never falls back to a default in silence.
"""

from __future__ import annotations

import difflib
import ipaddress
import os
import pwd
import re
import socket
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PREFIX = "HIVE_"
ROLES = ("queen", "runner")
LOG_FORMATS = ("text", "json")
LOG_LEVELS = ("debug", "info", "warning", "error")
_ON = ("on", "true", "yes", "1")
_OFF = ("off", "false", "no", "0")
_KEY_RE = re.compile(r"^HIVE_WORKER_KEY(?:_([1-9][0-9]*))?$")
_CHECK_RE = re.compile(r"^HIVE_CHECK_([A-Z0-9][A-Z0-9_]*)$")
PUBLISH_MODES = ("push", "github", "off")
_ENV_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

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
    pgdata: Path = Path(".hive/pg")
    roles: frozenset[str] = frozenset(ROLES)
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
    stall_minutes: float = 120.0
    turn_max_seconds: int = 3600
    bee_memory_mb: int = 1024
    agent: str = "demo"
    # claude: its executable (empty: `claude` on PATH)
    agent_bin: str = ""
    # names of variables that reach a turn beside PATH, HOME and LANG (never a HIVE_ one)
    agent_pass_env: tuple[str, ...] = ()
    # the user turns run as (empty: the hive's own user)
    agent_user: str = ""
    # credentials are never printed: a repr of the settings (a traceback, a debug line)
    # would otherwise carry them
    worker_keys: Mapping[str, str] = field(default_factory=dict, repr=False)
    worker_provider: str = "demo"
    worker_model: str = ""
    worker_lanes_per_key: int = 1
    key_env: str = "HIVE_KEY"
    http_addr: str = "127.0.0.1:8080"
    api_token: str | None = field(default=None, repr=False)
    log_format: str = "text"
    log_level: str = "info"
    bundle_max_bytes: int = 100 * 1024 * 1024
    reviewer_agent: str = "demo"
    # (name, shell command) of each HIVE_CHECK_<NAME>, by name
    checks: tuple[tuple[str, str], ...] = ()
    checks_timeout_seconds: int = 1800
    publish: str = "push"

    @property
    def is_queen(self) -> bool:
        return "queen" in self.roles

    @property
    def is_runner(self) -> bool:
        return "runner" in self.roles

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
        values: dict[str, Any] = {spec[0]: reader.read(name, spec) for name, spec in _SPECS.items()}
        values["worker_keys"] = reader.worker_keys()
        values["checks"] = reader.checks()
        reader.refuse_secret_passing(values["agent_pass_env"], values)
        if not values["runner_name"]:
            values["runner_name"] = f"{socket.gethostname()}:{os.getpid()}"
        reader.refuse_unknown()
        if reader.problems:
            raise SettingsError(reader.problems)
        return cls(**values)


# ---- parsers: each returns the value or raises ValueError("what is allowed") ----------


def _number(kind: Callable[[str], Any], low: float, high: float | None) -> Callable[[str], Any]:
    def parse(raw: str) -> Any:
        word = "an integer" if kind is int else "a number"
        allowed = f"{word} from {low:g}" + (f" to {high:g}" if high is not None else " up")
        try:
            value = kind(raw)
        except ValueError:
            raise ValueError(allowed) from None
        if value != value or value < low or (high is not None and value > high):
            raise ValueError(allowed)
        return value

    return parse


def _positive_float(raw: str) -> float:
    try:
        value = float(raw)
    except ValueError:
        raise ValueError("a number above 0") from None
    if not (0 < value < float("inf")):
        raise ValueError("a number above 0")
    return value


def _switch(raw: str) -> bool:
    word = raw.strip().lower()
    if word in _ON:
        return True
    if word in _OFF:
        return False
    raise ValueError("on or off")


def _choice(options: tuple[str, ...]) -> Callable[[str], str]:
    def parse(raw: str) -> str:
        word = raw.strip().lower()
        if word not in options:
            raise ValueError(" or ".join(options))
        return word

    return parse


def _roles(raw: str) -> frozenset[str]:
    parts = [p.strip().lower() for p in raw.split(",") if p.strip()]
    if not parts or any(p not in ROLES for p in parts):
        raise ValueError("queen, runner, or queen,runner")
    return frozenset(parts)


def _agent(raw: str) -> str:
    allowed = "demo, claude, command:<shell command> or python:<module>:<callable>"
    if raw in ("demo", "claude"):
        return raw
    if raw.startswith("command:") and raw[len("command:") :].strip():
        return raw
    if raw.startswith("python:"):
        parts = raw.split(":")
        if len(parts) == 3 and all(parts[1:]):
            return raw
    raise ValueError(allowed)


def _addr(raw: str) -> str:
    allowed = "host:port with a port from 0 to 65535"
    host, sep, port = raw.rpartition(":")
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise ValueError(allowed)
    return raw


def _env_name(raw: str) -> str:
    if not _ENV_NAME_RE.match(raw):
        raise ValueError("an environment variable name (letters, digits, _)")
    return raw


def _pass_env(raw: str) -> tuple[str, ...]:
    names = tuple(n.strip() for n in raw.split(",") if n.strip())
    allowed = "comma-separated variable names, none of them a HIVE_ variable"
    if any(not _ENV_NAME_RE.match(n) or n.upper().startswith(PREFIX) for n in names):
        raise ValueError(allowed)
    return names


def _user(raw: str) -> str:
    name = raw.strip()
    if not name:
        return ""
    try:
        entry = pwd.getpwuid(int(name)) if name.isdigit() else pwd.getpwnam(name)
    except (KeyError, OverflowError):
        raise ValueError("a user of this machine (a name or a uid), or empty") from None
    if entry.pw_uid == 0:
        raise ValueError("an unprivileged user (not root), or empty")
    return name


def _text(raw: str) -> str:
    return raw


def _nonempty(raw: str) -> str:
    if not raw.strip():
        raise ValueError("a non-empty value")
    return raw.strip()


def _optional(raw: str) -> str | None:
    return raw or None


def _path(raw: str) -> Path:
    if not raw.strip():
        raise ValueError("a path")
    return Path(raw)


# variable suffix -> (field, parser); defaults are the dataclass's
_SPECS: dict[str, tuple[str, Callable[[str], Any]]] = {
    "DATABASE_URL": ("database_url", _optional),
    "PGDATA": ("pgdata", _path),
    "ROLE": ("roles", _roles),
    "REPO_URL": ("repo_url", _optional),
    "BASE_REF": ("base_ref", _nonempty),
    "WORKDIR": ("workdir", _path),
    "QUEEN_TICK_SECONDS": ("queen_tick_seconds", _positive_float),
    "QUEEN_BEES_RUN_ELSEWHERE": ("queen_bees_run_elsewhere", _switch),
    "MAX_WORKERS": ("max_workers", _number(int, 1, 1024)),
    "RUNNER_SECONDS": ("runner_seconds", _positive_float),
    "RUNNER_SLOTS": ("runner_slots", _number(int, 1, 64)),
    "RUNNER_NAME": ("runner_name", _text),
    "RUNNER_DRAIN_SECONDS": ("runner_drain_seconds", _number(int, 0, None)),
    "PLATFORM_DRAIN_SECONDS": ("platform_drain_seconds", _number(int, 0, None)),
    "RUNNER_SILENT_MINUTES": ("runner_silent_minutes", _positive_float),
    "STALL_MINUTES": ("stall_minutes", _positive_float),
    "TURN_MAX_SECONDS": ("turn_max_seconds", _number(int, 1, None)),
    "BEE_MEMORY_MB": ("bee_memory_mb", _number(int, 0, None)),
    "AGENT": ("agent", _agent),
    "AGENT_BIN": ("agent_bin", _text),
    "AGENT_PASS_ENV": ("agent_pass_env", _pass_env),
    "AGENT_USER": ("agent_user", _user),
    "WORKER_PROVIDER": ("worker_provider", _nonempty),
    "WORKER_MODEL": ("worker_model", _text),
    "WORKER_LANES_PER_KEY": ("worker_lanes_per_key", _number(int, 1, 4)),
    "KEY_ENV": ("key_env", _env_name),
    "HTTP_ADDR": ("http_addr", _addr),
    "API_TOKEN": ("api_token", _optional),
    "LOG_FORMAT": ("log_format", _choice(LOG_FORMATS)),
    "LOG_LEVEL": ("log_level", _choice(LOG_LEVELS)),
    "BUNDLE_MAX_BYTES": ("bundle_max_bytes", _number(int, 1, None)),
    "REVIEWER_AGENT": ("reviewer_agent", _agent),
    "CHECKS_TIMEOUT_SECONDS": ("checks_timeout_seconds", _number(int, 1, 86400)),
    "PUBLISH": ("publish", _choice(PUBLISH_MODES)),
}
_FIELD_DEFAULTS = {f: getattr(Settings, f, None) for f, _ in _SPECS.values()}
KNOWN = frozenset(PREFIX + s for s in _SPECS) | {"HIVE_WORKER_KEY"}


class _Reader:
    def __init__(self, env: dict[str, str]) -> None:
        self.env = env
        self.problems: list[str] = []
        self.seen: set[str] = set()

    def read(self, suffix: str, spec: tuple[str, Callable[[str], Any]]) -> Any:
        name = PREFIX + suffix
        field_name, parse = spec
        default = _FIELD_DEFAULTS[field_name]
        self.seen.add(name)
        if name not in self.env:
            return default
        raw = self.env[name]
        try:
            return parse(raw)
        except ValueError as allowed:
            shown = "<hidden>" if "TOKEN" in name or "URL" in name else repr(raw)
            self.problems.append(f"{name}={shown} is not allowed: expected {allowed}")
            return default

    def worker_keys(self) -> dict[str, str]:
        keys = {}
        for name, value in self.env.items():
            if name.startswith("HIVE_WORKER_KEY") and _KEY_RE.match(name):
                match = _KEY_RE.match(name)
                assert match is not None
                if match.group(1) == "1":
                    self.problems.append(
                        f"{name} is not a key variable: the first key is HIVE_WORKER_KEY, "
                        "the second HIVE_WORKER_KEY_2"
                    )
                    continue
                keys[name] = value
                self.seen.add(name)
        return keys

    def checks(self) -> tuple[tuple[str, str], ...]:
        found = []
        for name, value in sorted(self.env.items()):
            match = _CHECK_RE.match(name)
            if match is None:
                continue
            self.seen.add(name)
            if not value.strip():
                self.problems.append(f"{name}='' is not allowed: expected a shell command")
                continue
            found.append((match.group(1).lower(), value))
        return tuple(found)

    def refuse_secret_passing(self, names: tuple[str, ...], values: Mapping[str, Any]) -> None:
        """A variable HIVE_AGENT_PASS_ENV names must not hold the database URL or the
        API token under another name."""
        secrets = {
            "the database URL": values.get("database_url"),
            "the API token": values.get("api_token"),
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
            guess = difflib.get_close_matches(name, sorted(KNOWN), n=1, cutoff=0.6)
            hint = f" (did you mean {guess[0]}?)" if guess else ""
            if name.startswith("HIVE_WORKER_KEY_"):
                hint = " (key variables are HIVE_WORKER_KEY, HIVE_WORKER_KEY_2, _3, ...)"
            self.problems.append(f"{name} is not a hive variable{hint}")


# ---- Kubernetes service links ---------------------------------------------------------
# A pod started with service links on (the default) receives, for every Service in its
# namespace, variables named after the Service: a Service `hive-queen` gives
# HIVE_QUEEN_SERVICE_HOST, HIVE_QUEEN_PORT_8080_TCP and their kin. They are the
# platform's, not configuration: a name with exactly one of these shapes, a value of the
# matching form and its Service's HIVE_..._SERVICE_HOST beside it is passed over; anything
# else under HIVE_ is still refused.

_LINK_PROTOCOLS = ("tcp", "udp", "sctp")
_LINK_TAIL_RE = re.compile(
    r"^(?:SERVICE_PORT(?:_[A-Z0-9_]+)?"
    r"|PORT(?:_(?P<port>[0-9]+)_(?P<proto>TCP|UDP|SCTP)(?:_(?P<part>PROTO|PORT|ADDR))?)?)$"
)


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def _is_port(text: str) -> bool:
    return text.isdigit() and not text.startswith("0") and int(text) <= 65535


def _is_link_url(text: str, protocol: str | None, port: str | None) -> bool:
    """`tcp://10.0.0.7:8080` (or `tcp://[fd00::7]:8080`), as Kubernetes writes a port's
    address, with the given protocol and port when they are known from the name."""
    scheme, sep, hostport = text.partition("://")
    host, colon, number = hostport.rpartition(":")
    if not sep or not colon or scheme not in _LINK_PROTOCOLS or not _is_port(number):
        return False
    if (protocol is not None and scheme != protocol) or (port is not None and number != port):
        return False
    return _is_ip(host[1:-1] if host.startswith("[") and host.endswith("]") else host)


def _link_value_fits(match: re.Match[str], value: str) -> bool:
    port, proto, part = match.group("port"), match.group("proto"), match.group("part")
    if port is None:
        if match.group(0).startswith("SERVICE_PORT"):
            return _is_port(value)
        return _is_link_url(value, None, None)
    protocol = proto.lower()
    if part is None:
        return _is_link_url(value, protocol, port)
    if part == "PROTO":
        return value == protocol
    if part == "PORT":
        return value == port
    return _is_ip(value)


def is_service_link(name: str, env: Mapping[str, str]) -> bool:
    """True when `name` is a variable Kubernetes injects for a Service in the pod's
    namespace: `<SERVICE>_SERVICE_HOST`, `_SERVICE_PORT`, `_SERVICE_PORT_<NAME>`, `_PORT`,
    `_PORT_<n>_<PROTO>` and `_PORT_<n>_<PROTO>_PROTO|_PORT|_ADDR`, with the value
    Kubernetes gives each, and `<SERVICE>_SERVICE_HOST` holding an IP address."""
    if name.endswith("_SERVICE_HOST"):
        return _is_ip(env.get(name, ""))
    for at in (m.start() for m in re.finditer("_", name)):
        service, tail = name[:at], name[at + 1 :]
        if not _is_ip(env.get(f"{service}_SERVICE_HOST", "")):
            continue
        match = _LINK_TAIL_RE.match(tail)
        if match and _link_value_fits(match, env.get(name, "")):
            return True
    return False
