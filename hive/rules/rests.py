"""A key's rest after its provider refused a turn (RULES 7), decided at the ending.

Each ending of a turn on a key moves that key's rest, in the order the endings land:
- `refused` (a rate limit or an overload, transient): one more strike; the key rests
  `key_rest_seconds(strikes)` from the ending (5 s, doubling, at most 300 s);
- `quota exhausted`: one more strike; the key rests until the reset time the agent
  reported (when it lies ahead, and at most QUOTA_RESET_MAX_SECONDS away), else for the
  configured quota rest (HIVE_QUOTA_REST_SECONDS);
- any other ending: the key took a turn, so its run of strikes ends and so does its rest.
A rest never ends earlier because of a refusal: the later of the two times wins. A rest
written for another key at the same index (its fingerprint differs) starts afresh.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from hive.rules.keys import key_rest_seconds
from hive.rules.states import QUOTA_EXHAUSTED, REFUSED_OUTCOME

QUOTA_REST_SECONDS = 3600  # HIVE_QUOTA_REST_SECONDS' default
# a reported reset further away than this is not believed (a garbled time would rest the
# key for ever); the configured quota rest applies instead
QUOTA_RESET_MAX_SECONDS = 7 * 86400


@dataclass(frozen=True)
class KeyEnding:
    """What an ending tells the key's rest: its outcome, the provider's reset time when
    the agent reported one, and the configured quota rest."""

    outcome: str
    resets_at: datetime | None = None
    quota_rest_seconds: int = QUOTA_REST_SECONDS


@dataclass(frozen=True)
class Rest:
    """A key's rest: the refusals in a row, and until when it rests (None: it does not)."""

    strikes: int = 0
    until: datetime | None = None


NO_REST = Rest()


def moves_rest(outcome: str) -> bool:
    """True when an ending with `outcome` puts a key to rest (a refusal)."""
    return outcome in (REFUSED_OUTCOME, QUOTA_EXHAUSTED)


def rest_after(before: Rest, ending: KeyEnding, at: datetime) -> Rest:
    """The key's rest once `ending` landed at `at`, its rest having been `before`."""
    if not moves_rest(ending.outcome):
        return NO_REST
    strikes = before.strikes + 1
    if ending.outcome == QUOTA_EXHAUSTED:
        until = _quota_until(ending, at)
    else:
        until = at + timedelta(seconds=key_rest_seconds(strikes))
    if before.until is not None and before.until > until:
        until = before.until
    return Rest(strikes, until)


def _quota_until(ending: KeyEnding, at: datetime) -> datetime:
    reset = ending.resets_at
    if reset is not None and at < reset <= at + timedelta(seconds=QUOTA_RESET_MAX_SECONDS):
        return reset
    return at + timedelta(seconds=ending.quota_rest_seconds)


def seconds_left(until: datetime, now: datetime) -> int:
    """Whole seconds of rest left at `now` (at least 1 while it rests; 0 once over)."""
    left = (until - now).total_seconds()
    if left <= 0:
        return 0
    return max(1, int(left))
