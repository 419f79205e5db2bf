"""The chat's variables (DESIGN 11, agents among themselves): their parsers and the rules
that tie them.

`HIVE_CHAT=matrix` needs `HIVE_MATRIX_URL`, `HIVE_MATRIX_ROOM` and the Queen's token
`HIVE_MATRIX_TOKEN_QUEEN`; the reviewer speaks when `HIVE_MATRIX_TOKEN_REVIEWER` is set,
and each `HIVE_MATRIX_TOKEN_<AGENT>` is one more bot (`SHAPER`: the shaper's; any other
name: a bee's bot that answers for that issue's bee). Tokens are never shown.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from hive.rules.modes import ChatMode
from hive.settings.values import has_control, is_token

TOKEN_PREFIX = "HIVE_MATRIX_TOKEN_"
_TOKEN_RE = re.compile(r"HIVE_MATRIX_TOKEN_([A-Z0-9][A-Z0-9_]{0,31})")
# a room id (!opaque:server) or an alias (#name:server)
_ROOM_RE = re.compile(r"[!#][^\s:]{1,255}:[A-Za-z0-9.-]+(?::[0-9]{1,5})?")
ROOM_PER_MINUTE_MAX = 600
GAP_SECONDS_MAX = 3600


def url(raw: str) -> str:
    """An http(s):// URL of a homeserver, without a user, path, query or fragment."""
    text = raw.strip().rstrip("/")
    allowed = "the homeserver's http:// or https:// URL (https://matrix.example.org)"
    if not text:
        return ""
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 (a bad port raises here)
    except ValueError:
        raise ValueError(allowed) from None
    bad = parts.username or parts.password or parts.query or parts.fragment or parts.path
    if parts.scheme not in ("http", "https") or not parts.hostname or bad or has_control(text):
        raise ValueError(allowed)
    return text


def room(raw: str) -> str:
    text = raw.strip()
    if text and not _ROOM_RE.fullmatch(text):
        raise ValueError("a room id (!abc:example.org) or an alias (#hive:example.org)")
    return text


def token(raw: str) -> str:
    if not is_token(raw):
        raise ValueError("an access token: printable ASCII without spaces")
    return raw


def agent_tokens(
    env: Mapping[str, str], seen: set[str], problems: list[str]
) -> tuple[tuple[str, str], ...]:
    """(name, token) of each HIVE_MATRIX_TOKEN_<AGENT> not read already (QUEEN and
    REVIEWER are), by name; a bad one is a problem, never shown."""
    found = []
    for name, value in sorted(env.items()):
        match = _TOKEN_RE.fullmatch(name)
        if match is None or name in seen:
            continue
        seen.add(name)
        if not is_token(value):
            problems.append(f"{name}=<hidden> is not allowed: expected an access token")
            continue
        found.append((match.group(1).lower(), value))
    return tuple(found)


def problems(found: Mapping[str, Any]) -> list[str]:
    """What the chat's variables lack together, one sentence each."""
    if found.get("chat") != ChatMode.MATRIX:
        return []
    out = []
    if not found.get("matrix_url"):
        out.append("HIVE_CHAT=matrix needs HIVE_MATRIX_URL (the homeserver's URL)")
    if not found.get("matrix_room"):
        out.append("HIVE_CHAT=matrix needs HIVE_MATRIX_ROOM (a room id or alias)")
    if not found.get("matrix_token_queen"):
        out.append("HIVE_CHAT=matrix needs HIVE_MATRIX_TOKEN_QUEEN (the Queen bot's token)")
    return out
