"""What each setting allows: one parser per kind of value.

A parser takes the variable's text and returns the value, or raises ValueError whose text
says what is allowed ("a whole number from 1 to 64"); the reader puts the variable's name
and its shown value in front. Numbers are ASCII digits only (`int()` would also take
Arabic-Indic or full-width digits and "1_000"), every number has a range, and a secret
never reaches a message. The parsers of places (URLs, addresses, paths) are in `places`.
"""

from __future__ import annotations

import pwd
import re
from collections.abc import Callable
from decimal import Decimal
from enum import StrEnum
from typing import Any

from hive.rules.credits import account_problem
from hive.rules.text import first_control

_ON = ("on", "true", "yes", "1")
_OFF = ("off", "false", "no", "0")
INTEGER_RE = re.compile(r"[0-9]+")
_DECIMAL_RE = re.compile(r"[0-9]+(?:\.[0-9]*)?|\.[0-9]+")
SPACES = " \t"
_ENV_NAME_RE = re.compile(r"[A-Z_][A-Z0-9_]*")
_ANY_ENV_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# A key reaches an agent in a variable of this shape: ANTHROPIC_API_KEY, OPENAI_API_KEY,
# CLAUDE_CODE_OAUTH_TOKEN, HF_TOKEN. The shape alone keeps out PATH, HOME and the like.
_SECRET_SUFFIXES = ("KEY", "TOKEN", "SECRET", "PASSWORD")
# Prefixes a loader, an interpreter or git reads as instructions (LD_PRELOAD,
# PYTHONSTARTUP, NODE_OPTIONS, GIT_SSH_COMMAND): a key must never be written there.
_PROGRAM_PREFIXES = ("LD_", "DYLD_", "GIT_", "PYTHON", "NODE_", "NPM_", "BASH_", "PERL", "RUBY")
_PROVIDER_RE = re.compile(r"[A-Za-z0-9._-]{1,64}")
PATH_MAX_BYTES = 4095
NAME_MAX_BYTES = 255
TEXT_MAX_CHARS = 200
TOKEN_MAX_CHARS = 4096

Parser = Callable[[str], Any]


def has_control(text: str) -> bool:
    """True when `text` holds a control character or a bidirectional override (they
    rewrite what a terminal shows)."""
    return first_control(text) is not None


# ---- numbers ---------------------------------------------------------------------------


def integer(low: int, high: int) -> Parser:
    allowed = f"a whole number from {low} to {high} (ASCII digits)"

    def parse(raw: str) -> int:
        text = raw.strip(SPACES)
        if not INTEGER_RE.fullmatch(text) or len(text) > 20 or not low <= int(text) <= high:
            raise ValueError(allowed)
        return int(text)

    return parse


def decimal(low: float, high: float) -> Parser:
    allowed = f"a number from {low:g} to {high:g} (ASCII digits, '.' before a fraction)"

    def parse(raw: str) -> float:
        text = raw.strip(SPACES)
        if not _DECIMAL_RE.fullmatch(text) or len(text) > 20 or not low <= float(text) <= high:
            raise ValueError(allowed)
        return float(text)

    return parse


def exact(low: str, high: str) -> Parser:
    """A decimal number kept exact (a Decimal): a ledger's markup, a lot's life in days."""
    lo, hi = Decimal(low), Decimal(high)
    allowed = f"a number from {low} to {high} (ASCII digits, '.' before a fraction)"

    def parse(raw: str) -> Decimal:
        text = raw.strip(SPACES)
        if not _DECIMAL_RE.fullmatch(text) or len(text) > 20 or not lo <= Decimal(text) <= hi:
            raise ValueError(allowed)
        return Decimal(text)

    return parse


# ---- words -----------------------------------------------------------------------------


def switch(raw: str) -> bool:
    word = raw.strip(SPACES).lower()
    if word in _ON:
        return True
    if word in _OFF:
        return False
    raise ValueError("on or off")


def choice(options: tuple[str, ...]) -> Parser:
    def parse(raw: str) -> str:
        word = raw.strip(SPACES).lower()
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
        parts = [p.strip(SPACES).lower() for p in raw.split(",") if p.strip(SPACES)]
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
    if raw.strip(SPACES).lower() == "off":
        return "off"
    try:
        return agent(raw)
    except ValueError as allowed:
        raise ValueError(f"off, {allowed}") from None


def line(max_chars: int = TEXT_MAX_CHARS, empty: bool = True) -> Parser:
    """One line of at most `max_chars` printable characters (empty when `empty`)."""
    allowed = f"one line of at most {max_chars} printable characters"

    def parse(raw: str) -> str:
        text = raw.strip(SPACES)
        if (not text and not empty) or len(text) > max_chars or has_control(text):
            raise ValueError(allowed)
        return text

    return parse


def provider(raw: str) -> str:
    if not _PROVIDER_RE.fullmatch(raw.strip(SPACES)):
        raise ValueError("a provider name of 1 to 64 letters, digits, '.', '_' or '-'")
    return raw.strip(SPACES)


def base_ref(raw: str) -> str:
    """A branch name git would take (`git check-ref-format --branch`, roughly)."""
    text = raw.strip(SPACES)
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
    text = raw.strip(SPACES)
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
    names = tuple(n.strip(SPACES) for n in raw.split(",") if n.strip(SPACES))
    if any(not _ANY_ENV_NAME_RE.fullmatch(n) or n.upper().startswith("HIVE_") for n in names):
        raise ValueError("comma-separated variable names, none of them a HIVE_ variable")
    return names


def user(raw: str) -> str:
    """An unprivileged user of this machine, by name or uid; empty: none."""
    name = raw.strip(SPACES)
    if not name:
        return ""
    try:
        entry = pwd.getpwuid(int(name)) if INTEGER_RE.fullmatch(name) else pwd.getpwnam(name)
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


# ---- credits ---------------------------------------------------------------------------


def account(raw: str) -> str:
    """An account's name (hive/rules/credits.py)."""
    name = raw.strip(SPACES)
    problem = account_problem(name)
    if problem is not None:
        raise ValueError(problem)
    return name


def key_owners(raw: str) -> tuple[str, ...]:
    """Comma-separated accounts, by key index (an empty place: that key has no owner)."""
    names = tuple(n.strip(SPACES) for n in raw.split(","))
    if names == ("",):
        return ()
    for name in names:
        problem = account_problem(name) if name else None
        if problem is not None:
            raise ValueError(f"{problem}, or nothing, for each key by index, comma-separated")
    return names
