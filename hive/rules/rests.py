"""A key's rest after its provider refused a turn (RULES 7), decided at the ending.

Each ending of a turn on a key moves that key's rest, in the order the endings land. The
rule decides on the ending's code (`OutcomeCode`); the sentence is for people:
- REFUSED (a rate limit or an overload, transient): one more strike; the key rests
  `key_rest_seconds(strikes)` from the ending (5 s, doubling, at most 300 s);
- QUOTA_EXHAUSTED: one more strike; the key rests until the reset time the agent
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
from hive.rules.outcome_codes import OutcomeCode
from hive.rules.states import Outcome

QUOTA_REST_SECONDS = 3600  # HIVE_QUOTA_REST_SECONDS' default
# a reported reset further away than this is not believed (a garbled time would rest the
# key for ever); the configured quota rest applies instead
QUOTA_RESET_MAX_SECONDS = 7 * 86400

# the codes of the endings that rest a key, and the sentence a rest's reason shows people
_REASONS = {
    OutcomeCode.REFUSED: Outcome.REFUSED,
    OutcomeCode.QUOTA_EXHAUSTED: Outcome.QUOTA_EXHAUSTED,
}
RESTING_CODES = frozenset(_REASONS)


@dataclass(frozen=True)
class KeyEnding:
    """What an ending tells the key's rest: its code, the provider's reset time when
    the agent reported one, and the configured quota rest."""

    code: OutcomeCode
    resets_at: datetime | None = None
    quota_rest_seconds: int = QUOTA_REST_SECONDS

    @property
    def reason(self) -> str:
        """The rest's reason as people read it (`quota exhausted`)."""
        return str(_REASONS.get(self.code, self.code))


@dataclass(frozen=True)
class Rest:
    """A key's rest: the refusals in a row, and until when it rests (None: it does not)."""

    strikes: int = 0
    until: datetime | None = None


NO_REST = Rest()


def moves_rest(code: OutcomeCode) -> bool:
    """True when an ending with `code` puts a key to rest (a refusal)."""
    return code in RESTING_CODES


def rest_after(before: Rest, ending: KeyEnding, at: datetime) -> Rest:
    """The key's rest once `ending` landed at `at`, its rest having been `before`."""
    if not moves_rest(ending.code):
        return NO_REST
    strikes = before.strikes + 1
    if ending.code is OutcomeCode.QUOTA_EXHAUSTED:
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
