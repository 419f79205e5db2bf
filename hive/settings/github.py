"""The GitHub forge's variables (DESIGN 10): their parsers and the rules that tie them.

`HIVE_FORGE=github` needs `HIVE_GITHUB_REPO` (owner/name) and `HIVE_GITHUB_TOKEN`;
`HIVE_PUBLISH=github` needs `HIVE_FORGE=github`. The token and the webhook secret are
never shown in a message.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from hive.rules.modes import ForgeMode, PublishMode
from hive.settings.values import has_control, is_token

MERGE_METHODS = ("merge", "squash", "rebase")
DEFAULT_API_URL = "https://api.github.com"
# GitHub's own limits: an owner is 1..39 of [A-Za-z0-9-], a repository 1..100 of
# [A-Za-z0-9._-] and not `.` or `..`
_OWNER_RE = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})")
_NAME_RE = re.compile(r"[A-Za-z0-9._-]{1,100}")
LABEL_MAX_CHARS = 50  # GitHub's longest label name
SECRET_MIN_CHARS = 16  # a webhook secret shorter than this is guessable


def repo(raw: str) -> str:
    owner, slash, name = raw.strip().partition("/")
    if not slash or not _OWNER_RE.fullmatch(owner) or not _NAME_RE.fullmatch(name):
        raise ValueError("owner/name of a GitHub repository, e.g. octo/hello")
    if name in (".", "..") or name.endswith(".git"):
        raise ValueError("owner/name of a GitHub repository, without .git")
    return f"{owner}/{name}"


def api_url(raw: str) -> str:
    """https://api.github.com, a GitHub Enterprise `https://host/api/v3`, or http:// to
    a loopback address (a test's fake)."""
    text = raw.strip().rstrip("/")
    allowed = "an https:// URL of GitHub's API (http:// only to 127.0.0.1 or localhost)"
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError:
        raise ValueError(allowed) from None
    del port
    if parts.username or parts.password or parts.query or parts.fragment or has_control(text):
        raise ValueError(allowed + ", without a user, password, query or fragment")
    if not parts.hostname:
        raise ValueError(allowed)
    if parts.scheme == "https":
        return text
    if parts.scheme == "http" and parts.hostname in ("127.0.0.1", "localhost", "::1"):
        return text
    raise ValueError(allowed)


def label(raw: str) -> str:
    text = raw.strip()
    if not text or len(text) > LABEL_MAX_CHARS or has_control(text) or "," in text:
        raise ValueError(f"a label name of 1 to {LABEL_MAX_CHARS} characters, without a comma")
    return text


def secret(raw: str) -> str:
    if not is_token(raw) or len(raw) < SECRET_MIN_CHARS:
        raise ValueError(f"{SECRET_MIN_CHARS} to 4096 printable ASCII characters without spaces")
    return raw


def problems(found: Mapping[str, Any]) -> list[str]:
    """What the forge's variables lack together, one sentence each."""
    out = []
    if found.get("forge") == ForgeMode.GITHUB:
        if not found.get("github_repo"):
            out.append("HIVE_FORGE=github needs HIVE_GITHUB_REPO (owner/name)")
        if not found.get("github_token"):
            out.append(
                "HIVE_FORGE=github needs HIVE_GITHUB_TOKEN (a token with issues, "
                "pull requests, contents, checks and statuses permissions)"
            )
    if found.get("publish") == PublishMode.GITHUB and found.get("forge") != ForgeMode.GITHUB:
        out.append("HIVE_PUBLISH=github needs HIVE_FORGE=github (the pull requests go there)")
    return out
