"""No review strands an issue (DESIGN 11): a review that cannot run is tried again on a
doubling pause, and after HIVE_REVIEW_FAILURES_MAX failures in a row its issue is
escalated to a person with a sentence.

A review fails when it cannot give a verdict on the work: its reviewer did not start
(`start`), ended without running to its end (`crash`), passed its bound (`timeout`),
ran to its end without a verdict on every criterion (`no_verdict`), had its key refused
by the provider (`refused`), or the review itself broke before its reviewer ran
(`error`: the head could not be read, say). A stop by the drain is no failure: the row
is reviewed again later, nothing counted.
"""

from __future__ import annotations

from dataclasses import dataclass

from hive.rules.reviewer import WAIT_PAUSE_START_SECONDS, next_pause_seconds
from hive.rules.states import WAIT, TurnOutcome

REVIEW_FAILURES_MAX = 3  # HIVE_REVIEW_FAILURES_MAX's default
START, CRASH, TIMEOUT, NO_VERDICT, REFUSED, ERROR = (
    "start",
    "crash",
    "timeout",
    "no_verdict",
    "refused",
    "error",
)
REASONS = (START, CRASH, TIMEOUT, NO_VERDICT, REFUSED, ERROR)
_SAID = {
    START: "the {who} could not start",
    CRASH: "the {who} did not finish",
    TIMEOUT: "the {who} passed its time bound",
    NO_VERDICT: "the {who} gave no verdict on every criterion",
    REFUSED: "the provider refused the {who}'s key",
    ERROR: "the {what} could not run",
}
# Who failed: the reviewer (a review) or the shaper (a shaping turn, DESIGN 11), and
# what a person does once it failed too often.
REVIEWER, SHAPER = "reviewer", "shaper"
_WHAT = {REVIEWER: "review", SHAPER: "shaping"}
_NEXT = {
    REVIEWER: "approve, reject with a note, or fix the reviewer",
    SHAPER: "write the issue's boundary and criteria, or fix the shaper",
}
DETAIL_MAX_CHARS = 300
# A shell's exit when the program it was to run is not there (127) or not runnable (126).
NOT_FOUND_EXITS = (126, 127)


def failure_reason(
    outcome: TurnOutcome,
    *,
    bound: bool,
    refused: bool,
    judged: int,
    criteria: int,
    exit_code: int | None = None,
) -> str | None:
    """Why a review turn that ended (`outcome`, the turn's, with `exit_code`) gave no
    verdict, or None when it did: `bound` when the turn was stopped at its bound,
    `refused` when the provider refused it, `judged` of `criteria` criteria judged when
    it finished. A `command:` whose shell found no program to run did not start."""
    if refused:
        return REFUSED
    if bound:
        return TIMEOUT
    if outcome is not TurnOutcome.FINISHED:
        return START if exit_code in NOT_FOUND_EXITS else CRASH
    if judged < criteria:
        return NO_VERDICT
    return None


@dataclass(frozen=True)
class AfterFailure:
    """What a failed review leads to: `escalate` (a person decides) or a try again after
    `pause_seconds`; `failures` in a row, this one counted; `note` the sentence."""

    escalate: bool
    failures: int
    pause_seconds: int
    note: str


def after_failure(
    reason: str,
    detail: str,
    failures_before: int,
    pause_seconds: int,
    failures_max: int = REVIEW_FAILURES_MAX,
    pause_start_seconds: int = WAIT_PAUSE_START_SECONDS,
    who: str = REVIEWER,
) -> AfterFailure:
    """The next step after a review failed for `reason` (one of REASONS; `detail` says
    more, one line) when `failures_before` failed in a row already and the last pause
    was `pause_seconds`: the pause starts at `pause_start_seconds` and doubles up to
    WAIT_PAUSE_CAP_SECONDS; the `failures_max`th failure escalates. Raises ValueError
    for an unknown reason or a maximum below 1. `who` failed: REVIEWER or SHAPER (the
    note names it, no proposal is then the `no_verdict`)."""
    if reason not in _SAID:
        raise ValueError(f"unknown review failure {reason!r}: expected one of {REASONS}")
    if who not in _WHAT:
        raise ValueError(f"unknown turn {who!r}: expected {REVIEWER} or {SHAPER}")
    if failures_max < 1:
        raise ValueError(f"at most {failures_max} review failures: expected 1 or more")
    failures = max(failures_before, 0) + 1
    said = _SAID[reason].format(who=who, what=_WHAT[who])
    if who == SHAPER and reason == NO_VERDICT:
        said = "the shaper gave no proposal"
    one_line = " ".join(detail.split())[:DETAIL_MAX_CHARS]
    why = f"{said} ({one_line})" if one_line else said
    if failures >= failures_max:
        note = (
            f"{why}; the {_WHAT[who]} failed {failures} times in a row, so a person decides "
            f"({_NEXT[who]})"
        )
        return AfterFailure(True, failures, 0, note)
    pause = next_pause_seconds(pause_seconds, WAIT, pause_start_seconds)
    note = f"{why}: tried again in {pause} s (failure {failures} of {failures_max})"
    return AfterFailure(False, failures, pause, note)
