"""What each setting allows: one parser per kind of value.

A parser takes the variable's text and returns the value, or raises ValueError whose text
says what is allowed ("a whole number from 1 to 64"); the reader puts the variable's name
and its shown value in front. Numbers are ASCII digits only (`int()` would also take
Arabic-Indic or full-width digits and "1_000"), every number has a range, and a secret
never reaches a message.
"""

from __future__ import annotations

import ipaddress
import os
import pwd
import re
from collections.abc import Callable
from decimal import Decimal
from enum import StrEnum
from pathlib import Path
from typing import Any

import psycopg

from hive.rules.credits import account_problem
from hive.rules.text import first_control

_ON = ("on", "true", "yes", "1")
_OFF = ("off", "false", "no", "0")
_INTEGER_RE = re.compile(r"[0-9]+")
_DECIMAL_RE = re.compile(r"[0-9]+(?:\.[0-9]*)?|\.[0-9]+")
_SPACES = " \t"
_PORT_RE = re.compile(r"[0-9]{1,5}")
_HOSTNAME_RE = re.compile(
    r"(?=.{1,253}\Z)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
    r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?"
)
_ENV_NAME_RE = re.compile(r"[A-Z_][A-Z0-9_]*")
_ANY_ENV_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# A key reaches an agent in a variable of this shape: ANTHROPIC_API_KEY, OPENAI_API_KEY,
# CLAUDE_CODE_OAUTH_TOKEN, HF_TOKEN. The shape alone keeps out PATH, HOME and the like.
_SECRET_SUFFIXES = ("KEY", "TOKEN", "SECRET", "PASSWORD")
# Prefixes a loader, an interpreter or git reads as instructions (LD_PRELOAD,
# PYTHONSTARTUP, NODE_OPTIONS, GIT_SSH_COMMAND): a key must never be written there.
_PROGRAM_PREFIXES = ("LD_", "DYLD_", "GIT_", "PYTHON", "NODE_", "NPM_", "BASH_", "PERL", "RUBY")
_PROVIDER_RE = re.compile(r"[A-Za-z0-9._-]{1,64}")
# Virtual file systems: a directory there is never the hive's to write.
_VIRTUAL_ROOTS = ("/proc", "/sys", "/dev")
PATH_MAX_BYTES = 4095
NAME_MAX_BYTES = 255
TEXT_MAX_CHARS = 200
TOKEN_MAX_CHARS = 4096
_URL_SCHEMES = ("postgresql://", "postgres://")
_URL_FORMS = "postgresql://user:password@host:5432/db, or libpq words like host=db dbname=hive"
_SCHEME_RE = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")

Parser = Callable[[str], Any]


def has_control(text: str) -> bool:
    """True when `text` holds a control character or a bidirectional override (they
    rewrite what a terminal shows)."""
    return first_control(text) is not None


# ---- numbers ---------------------------------------------------------------------------


def integer(low: int, high: int) -> Parser:
    allowed = f"a whole number from {low} to {high} (ASCII digits)"

    def parse(raw: str) -> int:
        text = raw.strip(_SPACES)
        if not _INTEGER_RE.fullmatch(text) or len(text) > 20 or not low <= int(text) <= high:
            raise ValueError(allowed)
        return int(text)

    return parse


def decimal(low: float, high: float) -> Parser:
    allowed = f"a number from {low:g} to {high:g} (ASCII digits, '.' before a fraction)"

    def parse(raw: str) -> float:
        text = raw.strip(_SPACES)
        if not _DECIMAL_RE.fullmatch(text) or len(text) > 20 or not low <= float(text) <= high:
            raise ValueError(allowed)
        return float(text)

    return parse


def exact(low: str, high: str) -> Parser:
    """A decimal number kept exact (a Decimal): a ledger's markup, a lot's life in days."""
    lo, hi = Decimal(low), Decimal(high)
    allowed = f"a number from {low} to {high} (ASCII digits, '.' before a fraction)"

    def parse(raw: str) -> Decimal:
        text = raw.strip(_SPACES)
        if not _DECIMAL_RE.fullmatch(text) or len(text) > 20 or not lo <= Decimal(text) <= hi:
            raise ValueError(allowed)
        return Decimal(text)

    return parse


# ---- words -----------------------------------------------------------------------------


def switch(raw: str) -> bool:
    word = raw.strip(_SPACES).lower()
    if word in _ON:
        return True
    if word in _OFF:
        return False
    raise ValueError("on or off")


def choice(options: tuple[str, ...]) -> Parser:
    def parse(raw: str) -> str:
        word = raw.strip(_SPACES).lower()
        if word not in options:
            raise ValueError(" or ".join(options))
        return word

    return parse


def mode(kind: type[StrEnum]) -> Parser:
    """A parser of one of `kind`'s values (its words, in its order), answering the member."""
    pick = choice(tuple(member.value for member in kind))

    def parse(raw: str) -> StrEnum:
        return kind(pick(raw))

    return parse


def roles(kind: type[StrEnum]) -> Parser:
    """A parser of a comma-separated set of `kind`'s values, answering the members."""
    names = tuple(member.value for member in kind)

    def parse(raw: str) -> frozenset[StrEnum]:
        parts = [p.strip(_SPACES).lower() for p in raw.split(",") if p.strip(_SPACES)]
        if not parts or any(p not in names for p in parts):
            raise ValueError(", ".join(names) + ", or " + ",".join(names))
        return frozenset(kind(p) for p in parts)

    return parse


def agent(raw: str) -> str:
    allowed = "demo, claude, codex, command:<shell command> or python:<module>:<callable>"
    if raw in ("demo", "claude", "codex"):
        return raw
    if raw.startswith("command:") and raw[len("command:") :].strip():
        return raw
    if raw.startswith("python:"):
        parts = raw.split(":")
        if len(parts) == 3 and all(p.isidentifier() for p in ".".join(parts[1:]).split(".")):
            return raw
    raise ValueError(allowed)


def shaper(raw: str) -> str:
    """HIVE_SHAPER_AGENT: `off`, or an agent as HIVE_AGENT's (demo, claude, codex,
    command:, python:)."""
    if raw.strip(_SPACES).lower() == "off":
        return "off"
    try:
        return agent(raw)
    except ValueError as allowed:
        raise ValueError(f"off, {allowed}") from None


def line(max_chars: int = TEXT_MAX_CHARS, empty: bool = True) -> Parser:
    """One line of at most `max_chars` printable characters (empty when `empty`)."""
    allowed = f"one line of at most {max_chars} printable characters"

    def parse(raw: str) -> str:
        text = raw.strip(_SPACES)
        if (not text and not empty) or len(text) > max_chars or has_control(text):
            raise ValueError(allowed)
        return text

    return parse


def provider(raw: str) -> str:
    if not _PROVIDER_RE.fullmatch(raw.strip(_SPACES)):
        raise ValueError("a provider name of 1 to 64 letters, digits, '.', '_' or '-'")
    return raw.strip(_SPACES)


def base_ref(raw: str) -> str:
    """A branch name git would take (`git check-ref-format --branch`, roughly)."""
    text = raw.strip(_SPACES)
    bad = (
        not text
        or len(text) > NAME_MAX_BYTES
        or has_control(text)
        or any(c in text for c in " ~^:?*[\\")
        or ".." in text
        or "@{" in text
        or "//" in text
        or text.startswith(("-", "/", "."))
        or text.endswith(("/", ".", ".lock"))
        or text == "@"
    )
    if bad:
        raise ValueError("a branch name (no spaces, '..', '~^:?*[\\', nor a leading '-')")
    return text


def env_name(raw: str) -> str:
    """The variable a command agent finds its key in: a name ending in KEY, TOKEN, SECRET
    or PASSWORD, and none a loader, an interpreter or git reads."""
    text = raw.strip(_SPACES)
    ok = (
        _ENV_NAME_RE.fullmatch(text) is not None
        and text.endswith(_SECRET_SUFFIXES)
        and not text.startswith(_PROGRAM_PREFIXES)
        and (not text.startswith("HIVE_") or text == "HIVE_KEY")
    )
    if not ok:
        raise ValueError(
            "an upper-case variable name ending in KEY, TOKEN, SECRET or PASSWORD "
            "(ANTHROPIC_API_KEY, say), not one of HIVE_ (but HIVE_KEY), LD_, GIT_, PYTHON..."
        )
    return text


def pass_env(raw: str) -> tuple[str, ...]:
    """Comma-separated variable names, none of them a HIVE_ one."""
    names = tuple(n.strip(_SPACES) for n in raw.split(",") if n.strip(_SPACES))
    if any(not _ANY_ENV_NAME_RE.fullmatch(n) or n.upper().startswith("HIVE_") for n in names):
        raise ValueError("comma-separated variable names, none of them a HIVE_ variable")
    return names


def absolute_paths(raw: str) -> tuple[str, ...]:
    """Comma-separated absolute paths (HIVE_AGENT_SANDBOX_PATHS), each normalised once."""
    paths: list[str] = []
    for part in raw.split(","):
        path = part.strip(_SPACES)
        if not path:
            continue
        if not path.startswith("/") or has_control(path) or len(path) > PATH_MAX_BYTES:
            raise ValueError("comma-separated absolute paths (/opt/toolchain,/var/cache/pip)")
        normal = os.path.normpath(path)
        if normal == "/":
            raise ValueError("paths below / (the whole machine is not a toolchain)")
        if normal not in paths:
            paths.append(normal)
    return tuple(paths)


def host_ports(raw: str) -> tuple[str, ...]:
    """Comma-separated host:port pairs (HIVE_AGENT_ALLOW_HOSTS), lower-cased, each once."""
    pairs: list[str] = []
    for part in raw.split(","):
        pair = part.strip(_SPACES).lower()
        if not pair:
            continue
        host, _, port = pair.rpartition(":")
        host = host.strip("[]")
        if not host or not _INTEGER_RE.fullmatch(port) or not 0 < int(port) < 65536:
            raise ValueError("comma-separated host:port pairs (api.anthropic.com:443)")
        if has_control(host) or " " in host:
            raise ValueError("comma-separated host:port pairs (api.anthropic.com:443)")
        if f"{host}:{int(port)}" not in pairs:
            pairs.append(f"{host}:{int(port)}")
    return tuple(pairs)


def user(raw: str) -> str:
    """An unprivileged user of this machine, by name or uid; empty: none."""
    name = raw.strip(_SPACES)
    if not name:
        return ""
    try:
        entry = pwd.getpwuid(int(name)) if _INTEGER_RE.fullmatch(name) else pwd.getpwnam(name)
    except (KeyError, OverflowError, ValueError):
        raise ValueError("a user of this machine (a name or a uid), or empty") from None
    if entry.pw_uid == 0:
        raise ValueError("an unprivileged user (not root), or empty")
    return name


# ---- secrets ---------------------------------------------------------------------------


def is_token(text: str) -> bool:
    """Printable ASCII without spaces: what an HTTP header or a provider's client sends."""
    return 0 < len(text) <= TOKEN_MAX_CHARS and all(33 <= ord(c) <= 126 for c in text)


def token(raw: str) -> str:
    if not is_token(raw):
        raise ValueError(
            f"1 to {TOKEN_MAX_CHARS} printable ASCII characters without spaces "
            "(unset it to serve without a token)"
        )
    return raw


def database_url(raw: str) -> str:
    """A postgresql:// URL or libpq key=value words. No message quotes the value (it
    holds the password), libpq's own error text included."""
    text = raw.strip(_SPACES)
    if not text:
        raise ValueError(f"{_URL_FORMS}; unset it (not empty) to use the embedded server")
    if has_control(text):
        raise ValueError("a URL without control characters")
    if _SCHEME_RE.match(text) and not text.startswith(_URL_SCHEMES):
        raise ValueError("a URL whose scheme is postgresql:// or postgres://")
    if not text.startswith(_URL_SCHEMES) and "=" not in text:
        raise ValueError(_URL_FORMS)
    try:
        info = psycopg.conninfo.conninfo_to_dict(text)
    except psycopg.Error:
        raise ValueError(f"{_URL_FORMS} (%-encode a password's special characters)") from None
    for port in str(info.get("port") or "").split(","):
        if port and not (_PORT_RE.fullmatch(port) and 1 <= int(port) <= 65535):
            raise ValueError("a URL whose port is from 1 to 65535 (ASCII digits)")
    return text


# ---- addresses and paths ---------------------------------------------------------------


def http_addr(raw: str) -> str:
    allowed = "host:port, the host a name or an IP address ([::1] for IPv6), the port 0 to 65535"
    host, sep, port = raw.strip(_SPACES).rpartition(":")
    if not sep or not _PORT_RE.fullmatch(port) or int(port) > 65535:
        raise ValueError(allowed)
    if host.startswith("[") and host.endswith("]"):
        if not _is_ipv6(host[1:-1]):
            raise ValueError(allowed)
    elif not _HOSTNAME_RE.fullmatch(host):
        raise ValueError(allowed)
    return f"{host}:{int(port)}"


def _is_ipv6(text: str) -> bool:
    try:
        return isinstance(ipaddress.ip_address(text), ipaddress.IPv6Address)
    except ValueError:
        return False


def optional_text(raw: str) -> str | None:
    """A path or URL in one line; empty means unset."""
    text = raw.strip(_SPACES)
    if has_control(text):
        raise ValueError("a path or URL without control characters")
    return text or None


def directory(raw: str) -> Path:
    """A directory the hive may create: not a file, not under /proc, /sys or /dev, and
    not below a file. Whether it is writable is not asked here: a process that never
    uses it (`hive migrate` on a read-only root file system) must still start."""
    if not raw.strip(_SPACES):
        raise ValueError("a directory path")
    if has_control(raw):
        raise ValueError("a directory path without control characters")
    try:
        encoded = os.fsencode(raw)
    except UnicodeError:
        raise ValueError("a directory path in the file system's encoding") from None
    if len(encoded) > PATH_MAX_BYTES or any(len(p) > NAME_MAX_BYTES for p in encoded.split(b"/")):
        raise ValueError(f"a directory path of at most {PATH_MAX_BYTES} bytes")
    path = Path(raw)
    for shown in {os.path.abspath(raw), os.path.realpath(raw)}:
        if any(shown == root or shown.startswith(root + "/") for root in _VIRTUAL_ROOTS):
            raise ValueError("a directory outside /proc, /sys and /dev")
    here = Path(os.path.abspath(raw))
    while not here.exists() and here != here.parent:
        here = here.parent
    if not here.is_dir():
        what = "it is a file" if here == Path(os.path.abspath(raw)) else f"{here} is a file"
        raise ValueError(f"a directory ({what})")
    return path


def prices_file(raw: str) -> Path | None:
    """A readable price table (hive/prices.py), read once here so a bad one is refused
    at start with the rest of the settings; empty: the one the package ships."""
    from hive.prices import PricesError, load

    if not raw.strip(_SPACES):
        return None
    if has_control(raw):
        raise ValueError("the path of a price table file (TOML)")
    path = Path(raw.strip(_SPACES))
    try:
        load(path)
    except PricesError as err:
        raise ValueError(f"a price table that reads ({err})") from None
    return path


# ---- credits ---------------------------------------------------------------------------


def account(raw: str) -> str:
    """An account's name (hive/rules/credits.py)."""
    name = raw.strip(_SPACES)
    problem = account_problem(name)
    if problem is not None:
        raise ValueError(problem)
    return name


def key_owners(raw: str) -> tuple[str, ...]:
    """Comma-separated accounts, by key index (an empty place: that key has no owner)."""
    names = tuple(n.strip(_SPACES) for n in raw.split(","))
    if names == ("",):
        return ()
    for name in names:
        problem = account_problem(name) if name else None
        if problem is not None:
            raise ValueError(f"{problem}, or nothing, for each key by index, comma-separated")
    return names
