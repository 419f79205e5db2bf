"""Outcome codes: the short snake_case form of an order's outcome for a metric's label.

The outcome sentence (`reaped: no completion within 120 minutes`) stays in the row; a
label carries only its code, from this closed set, so a dashboard's series never split on
a bound or a rewording. A label that is not an outcome maps to OTHER rather than into a
new series."""

from __future__ import annotations

import re
from enum import StrEnum

from hive.rules.states import Outcome


class OutcomeCode(StrEnum):
    """The codes a metric's `outcome` label takes: each outcome's, and OTHER."""

    FINISHED = "finished"
    ENDED_BADLY = "ended_badly"
    ENDED_UNEXPECTEDLY = "ended_unexpectedly"
    REFUSED = "refused"
    QUOTA_EXHAUSTED = "quota_exhausted"
    HANDED_BACK = "handed_back"
    REAPED_AT_BOOT = "reaped_at_boot"
    REAPED_RUNNER_SILENT = "reaped_runner_silent"
    REAPED_NO_COMPLETION = "reaped_no_completion"
    CANCELLED = "cancelled"
    OTHER = "other"


_BY_OUTCOME: dict[str, OutcomeCode] = {
    Outcome.FINISHED: OutcomeCode.FINISHED,
    Outcome.ENDED_BADLY: OutcomeCode.ENDED_BADLY,
    Outcome.ENDED_UNEXPECTEDLY: OutcomeCode.ENDED_UNEXPECTEDLY,
    Outcome.REFUSED: OutcomeCode.REFUSED,
    Outcome.QUOTA_EXHAUSTED: OutcomeCode.QUOTA_EXHAUSTED,
    Outcome.HANDED_BACK: OutcomeCode.HANDED_BACK,
    Outcome.REAPED_AT_BOOT: OutcomeCode.REAPED_AT_BOOT,
    Outcome.REAPED_RUNNER_SILENT: OutcomeCode.REAPED_RUNNER_SILENT,
    Outcome.CANCELLED: OutcomeCode.CANCELLED,
}
# the two-hour rule's outcome carries its bound (states.reaped_no_completion)
_NO_COMPLETION = re.compile(r"reaped: no completion within [1-9][0-9]* minutes")


def outcome_code(outcome: str) -> OutcomeCode:
    """The code of an outcome label; OTHER for anything outside the closed set."""
    code = _BY_OUTCOME.get(outcome)
    if code is not None:
        return code
    if _NO_COMPLETION.fullmatch(outcome):
        return OutcomeCode.REAPED_NO_COMPLETION
    return OutcomeCode.OTHER
