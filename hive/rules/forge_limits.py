"""GitHub's limits and manners (DESIGN 10): when a request may be sent again, and after
how long. Pure: the clock and the response come in as arguments.

GitHub's REST documentation says: a primary limit exceeded is a 403 or 429 with
`x-ratelimit-remaining: 0`, and nothing may be sent before `x-ratelimit-reset` (UTC epoch
seconds); a secondary limit is a 403 or 429 whose message says so, with `retry-after`
(seconds) when GitHub gives one, else at least a minute, doubling while it lasts. A 5xx
is GitHub's own trouble: tried again after a short pause, doubling. Anything else (a
404, a 422, a 403 that names a permission) is an answer, not a pause.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

SECONDARY_FIRST_SECONDS = 60.0  # GitHub: "wait for at least one minute before retrying"
SERVER_FIRST_SECONDS = 1.0  # a 5xx: the first pause, doubling
MAX_PAUSE_SECONDS = 900.0  # no single pause is longer (a reset is at most an hour away)
MAX_TRIES = 5  # a request is sent at most this many times, then its error is raised
# Below this many requests left the client paces itself until the reset, rather than
# running into the wall (a quiet poll answered 304 costs none).
LOW_REMAINING = 50


class Pause(StrEnum):
    """Why a response is waited out and sent again, or NONE: it is the answer."""

    NONE = "none"
    PRIMARY = "primary rate limit"
    SECONDARY = "secondary rate limit"
    SERVER = "server error"


@dataclass(frozen=True)
class Wait:
    """Send the request again after `seconds` (`why` names the limit), or give up
    (`give_up`: MAX_TRIES sent already; the response's error is raised)."""

    why: Pause
    seconds: float
    give_up: bool = False


def header(headers: Mapping[str, str], name: str) -> str | None:
    """`name`'s value, whatever the case of the keys in `headers`."""
    lower = name.lower()
    for key, value in headers.items():
        if key.lower() == lower:
            return value
    return None


def _number(text: str | None) -> float | None:
    if text is None:
        return None
    try:
        value = float(text.strip())
    except ValueError:
        return None
    return value if value == value and value >= 0 else None  # NaN, negative: no value


def pause_of(status: int, headers: Mapping[str, str], message: str) -> Pause:
    """Which kind of pause a response asks for (NONE: it is the answer)."""
    if status >= 500:
        return Pause.SERVER
    if status not in (403, 429):
        return Pause.NONE
    remaining = _number(header(headers, "x-ratelimit-remaining"))
    if "secondary rate limit" in message.lower() or header(headers, "retry-after") is not None:
        return Pause.SECONDARY
    if remaining == 0:
        return Pause.PRIMARY
    if status == 429:
        return Pause.SECONDARY
    return Pause.NONE  # a 403 that is no limit: a permission, a block


def wait_after(
    status: int, headers: Mapping[str, str], message: str, *, now_epoch: float, tries: int
) -> Wait | None:
    """What to do after the `tries`-th send (1 for the first) got this response: None
    when it is the answer, else a Wait. A pause is never shorter than the limit asks
    (retry-after, the reset) and never longer than MAX_PAUSE_SECONDS."""
    why = pause_of(status, headers, message)
    if why == Pause.NONE:
        return None
    doublings = max(tries - 1, 0)
    if why == Pause.SERVER:
        seconds = SERVER_FIRST_SECONDS * 2**doublings
    elif why == Pause.PRIMARY:
        reset = _number(header(headers, "x-ratelimit-reset"))
        seconds = max((reset or now_epoch) - now_epoch, 1.0)
    else:
        after = _number(header(headers, "retry-after"))
        remaining = _number(header(headers, "x-ratelimit-remaining"))
        reset = _number(header(headers, "x-ratelimit-reset"))
        if after is not None:
            seconds = max(after, 1.0)
        elif remaining == 0 and reset is not None:
            seconds = max(reset - now_epoch, 1.0)
        else:
            seconds = SECONDARY_FIRST_SECONDS * 2**doublings
    return Wait(why, min(seconds, MAX_PAUSE_SECONDS), give_up=tries >= MAX_TRIES)


def holds_every_request(why: Pause) -> bool:
    """Whether a pause holds every request of the client, not only the one that met it: a
    rate limit is the token's (GitHub counts all its requests, and sending more while
    it lasts prolongs it), a server error is that request's own."""
    return why in (Pause.PRIMARY, Pause.SECONDARY)


def pace_seconds(headers: Mapping[str, str], *, now_epoch: float) -> float:
    """How long to hold the next request after a successful response: 0 while plenty is
    left; when fewer than LOW_REMAINING remain, the time to the reset spread over what is
    left (so the last requests of the hour are not spent at once)."""
    remaining = _number(header(headers, "x-ratelimit-remaining"))
    reset = _number(header(headers, "x-ratelimit-reset"))
    if remaining is None or reset is None or remaining >= LOW_REMAINING:
        return 0.0
    left = max(reset - now_epoch, 0.0)
    return min(left / max(remaining, 1.0), MAX_PAUSE_SECONDS)


_MISSING = "the token lacks a permission this needs"


def missing_permission(status: int, headers: Mapping[str, str], message: str) -> str | None:
    """The sentence for a refusal caused by a permission the token lacks, naming it
    (GitHub's `x-accepted-github-permissions`, or `x-accepted-oauth-scopes` for a classic
    token), or None when the response is not that."""
    if status not in (403, 404) or pause_of(status, headers, message) != Pause.NONE:
        return None
    fine = header(headers, "x-accepted-github-permissions")
    scopes = header(headers, "x-accepted-oauth-scopes")
    if fine:
        return f"the GitHub token lacks the permission {fine.strip()} (fine-grained)"
    if scopes:
        return f"the GitHub token lacks the scope {scopes.strip()} (classic token)"
    if status == 403 and "not accessible" in message.lower():
        return f"{_MISSING} ({message.strip()})"
    return None


_LINK_NEXT = 'rel="next"'


def next_link(link_header: str | None) -> str | None:
    """The `rel="next"` URL of a Link header (RFC 8288, as GitHub sends it), or None."""
    if not link_header:
        return None
    for part in link_header.split(","):
        url, _, params = part.partition(";")
        url = url.strip()
        if _LINK_NEXT in params.replace(" ", "") and url.startswith("<") and url.endswith(">"):
            return url[1:-1]
    return None
