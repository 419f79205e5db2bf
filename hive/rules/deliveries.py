"""GitHub's deliveries are not trusted for order (issue 25).

A webhook delivery may come twice (GitHub's "Redeliver", or anyone who kept a signed
body), late (after a newer one), or name an issue number the hive already gave one of
its own issues. Each decision here is pure: the hook and the poll gather the facts.

- A delivery is known by its `X-GitHub-Delivery` (`delivery_id`): one handled already
  changes nothing. Kept DELIVERY_KEEP_DAYS (GitHub redelivers for 3 days).
- An issue's state is known by its `updated_at` (`forge_time`): a payload older than
  the one the row last followed changes nothing (`is_stale`); an equal one is read (two
  changes may share a second, and a sync of the same state changes nothing anyway).
- An issue the hive gave its own number (origin `hive`) is never GitHub's
  (`github_may_follow`); a row from before origins were kept (None) may be either.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

DELIVERY_KEEP_DAYS = 7
DELIVERY_HEADER = "x-github-delivery"
# GitHub's delivery ids are GUIDs; anything of this form is taken as an id
_DELIVERY_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
ORIGIN_HIVE = "hive"
ORIGIN_GITHUB = "github"


def delivery_id(header: str | None) -> str | None:
    """The delivery id in an `X-GitHub-Delivery` header, or None when it is missing or
    not of an id's form (such a delivery is handled, never remembered)."""
    if header is None:
        return None
    text = header.strip()
    return text if _DELIVERY_ID.fullmatch(text) else None


def forge_time(value: object) -> datetime | None:
    """GitHub's `updated_at` (ISO 8601 with its zone, `2026-12-02T05:30:00Z`) as a UTC
    time, or None when it is missing or no such time."""
    if not isinstance(value, str) or len(value) > 40:
        return None
    try:
        when = datetime.fromisoformat(value)
    except ValueError:
        return None
    if when.tzinfo is None:
        return None
    try:
        return when.astimezone(UTC)
    except OverflowError:
        return None


def is_stale(followed: datetime | None, delivered: datetime | None) -> bool:
    """Whether a payload of `delivered` time is older than the state the row `followed`
    (either unknown: not stale)."""
    return followed is not None and delivered is not None and delivered < followed


def github_may_follow(origin: str | None) -> bool:
    """Whether GitHub's issue of a row's number may change that row (not the hive's own)."""
    return origin != ORIGIN_HIVE


def taken_sentence(number: int) -> str:
    """Why GitHub's issue `number` is not followed: the hive's own issue holds it."""
    return (
        f"the hive's own issue #{number} (added with `hive issue add`) holds this number,"
        " so this issue is not followed"
    )
