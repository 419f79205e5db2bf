"""When the provider says a refused key works again, in the words the agent CLIs print.

Pure functions: each reads one form and answers a UTC time, or None when the text gives
no time (it is missing, garbled, or outside the calendar). Whether a time is believed
(one in the past, or absurdly far away) is the key's rest's decision, not this module's
(`hive.rules.rests`: such a reset is not believed, and the configured quota rest applies).

- Unix seconds, a number or its digits (`epoch_reset`): Claude Code's `resetsAt`, in the
  `rate_limit_info` of a refused request's message (`api_error` `usage_limit_reached`).
- `Claude AI usage limit reached|<Unix seconds>` (`usage_limit_refusal`): how Claude
  Code 1.x said an account's usage limit was reached.
- `You have reached your specified API usage limits. You will regain access on
  2026-04-01 at 00:00 UTC.` (`spend_limit_refusal`): the Anthropic API's refusal of a
  key past its spend limit (a 400, which Claude Code passes on as an `unknown` error).
- `... try again at 8:51 PM.` or `... try again at Dec 2nd, 2026 1:49 AM.`
  (`try_again_reset`): Codex's usage limit, in the local time of the zone Codex runs in,
  without the date when it is today's, to the minute: the end of that minute is
  answered, so the key is never tried before its reset.
"""

from __future__ import annotations

import math
import re
from datetime import UTC, date, datetime, timedelta, tzinfo

from hive.agents.protocol import Refusal

QUOTA = "quota"  # hive.rules.keys.sort_refusal's word for an exhausted account
USAGE_LIMIT_MARK = "Claude AI usage limit reached"
_USAGE_LIMIT = re.compile(re.escape(USAGE_LIMIT_MARK) + r"(?:\|(\S*))?")
SPEND_LIMIT_MARK = "You have reached your specified API usage limits"
_REGAIN = re.compile(
    r"regain access on (\d{4})-(\d{2})-(\d{2}) at (\d{1,2}):(\d{2}) UTC", re.IGNORECASE
)
_TRY_AGAIN = re.compile(
    r"try again at (?:([A-Z][a-z]{2}) (\d{1,2})(?:st|nd|rd|th), (\d{4}) )?"
    r"(\d{1,2}):(\d{2}) ([AP]M)\b",
    re.IGNORECASE,
)
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_MINUTE = timedelta(minutes=1)


def epoch_reset(value: object) -> datetime | None:
    """`value` (a number, or a string of digits) as Unix seconds; None when it is no such
    number, or names no time a calendar holds (a negative one, one in milliseconds past
    the year 9999)."""
    if isinstance(value, str) and re.fullmatch(r"[0-9]{1,20}(?:\.[0-9]+)?", value.strip()):
        value = float(value)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if not math.isfinite(value) or value < 0:
        return None
    try:
        return datetime.fromtimestamp(int(value), UTC)
    except (OverflowError, OSError, ValueError):
        return None


def usage_limit_refusal(text: str) -> Refusal | None:
    """A quota refusal when `text` is Claude Code 1.x's usage-limit message, with the
    reset after its `|` (None when that is missing or not Unix seconds); None for any
    other text."""
    found = _USAGE_LIMIT.search(text)
    if found is None:
        return None
    return Refusal(QUOTA, epoch_reset(found.group(1) or ""))


def spend_limit_refusal(text: str) -> Refusal | None:
    """A quota refusal when `text` holds the Anthropic API's spend-limit message, with
    the time it says access is regained (None when it names none, or no real time); None
    for any other text."""
    if SPEND_LIMIT_MARK.lower() not in text.lower():
        return None
    found = _REGAIN.search(text)
    resets_at = None
    if found is not None:
        year, month, day, hour, minute = (int(part) for part in found.groups())
        try:
            resets_at = datetime(year, month, day, hour, minute, tzinfo=UTC)
        except ValueError:
            resets_at = None
    return Refusal(QUOTA, resets_at)


def try_again_reset(message: str, now: datetime, zone: tzinfo) -> datetime | None:
    """The reset in Codex's `try again at <local time>` (see the module): the end of the
    minute it names, in `zone`, on the date it names or else on `now`'s date there; None
    when the message names no such time."""
    found = _TRY_AGAIN.search(message)
    if found is None:
        return None
    month, day, year, hour, minute, half = found.groups()
    if month is not None:
        if month.lower() not in _MONTHS:
            return None
        try:
            on = date(int(year), _MONTHS.index(month.lower()) + 1, int(day))
        except ValueError:
            return None
    else:
        on = now.astimezone(zone).date()
    hours = int(hour)
    if not 1 <= hours <= 12 or int(minute) > 59:
        return None
    hours = hours % 12 + (12 if half.upper() == "PM" else 0)
    local = datetime(on.year, on.month, on.day, hours, int(minute), tzinfo=zone)
    return (local + _MINUTE).astimezone(UTC)
