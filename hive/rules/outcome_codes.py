"""Outcome codes: how an order's attempt ended, as a code the hive decides on.

The row keeps two columns: `outcome_code` (this enum; the store's `hive.outcome_code`
type holds the same values) and `outcome`, the sentence for people (`reaped: no
completion within 120 minutes`). Every writer names the code; nothing reads the
sentence back. A metric's `outcome` label is the code, so a dashboard's series never
split on a bound or a rewording. OTHER is an ending outside the closed set: a row
written before the code existed, or a label no writer of ours makes.
"""

from __future__ import annotations

from enum import StrEnum

from hive.rules.states import Outcome


class OutcomeCode(StrEnum):
    """The code of an attempt's ending: each outcome's, and OTHER."""

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
# The reapers' codes: an order ended by one of these, or cancelled by a person, is REAPED.
REAPED_CODES = frozenset(
    {
        OutcomeCode.REAPED_AT_BOOT,
        OutcomeCode.REAPED_RUNNER_SILENT,
        OutcomeCode.REAPED_NO_COMPLETION,
        OutcomeCode.CANCELLED,
    }
)


def code_of(outcome: str) -> OutcomeCode:
    """The code of an ending a turn made (one of the closed set of Outcome); OTHER for
    anything else. The stall reaper's ending is never asked: it names its code."""
    return _BY_OUTCOME.get(outcome, OutcomeCode.OTHER)
