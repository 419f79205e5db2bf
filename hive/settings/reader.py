"""Reads the environment for `Settings.from_env`, one variable at a time, and gathers
every problem it finds (a bad value, an unknown `HIVE_` name) instead of stopping at the
first; `from_env` raises them together.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from typing import Any

from hive.settings import values
from hive.settings.links import is_service_link
from hive.settings.variables import KNOWN, PREFIX

_KEY_RE = re.compile(r"HIVE_WORKER_KEY(?:_([1-9][0-9]*))?")
_CHECK_RE = re.compile(r"HIVE_CHECK_([A-Z0-9][A-Z0-9_]*)")
_NAME_RE = re.compile(r"[A-Za-z0-9_]+")

# Variables a bee's agent receives (DESIGN 6). A `hive` command run inside a bee sees
# them; they are the agent's, not configuration, so they are neither read nor refused.
AGENT_SIDE = frozenset(
    {"HIVE_ISSUE", "HIVE_BOUNDARY", "HIVE_BRANCH", "HIVE_BRIEF_FILE", "HIVE_KEY"}
)
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


class Reader:
    """One pass over `env`; `defaults` is each field's default (the dataclass's)."""

    def __init__(self, env: dict[str, str], defaults: Mapping[str, Any]) -> None:
        self.env = env
        self._defaults = defaults
        self.problems: list[str] = []
        self.seen: set[str] = set()

    def read(self, suffix: str, spec: tuple[str, values.Parser]) -> Any:
        name = PREFIX + suffix
        field_name, parse = spec
        default = self._defaults[field_name]
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
