"""The retry card: which endings are failures, and the back-off after failures in a row."""

from __future__ import annotations

import pytest

from hive.rules.outcome_codes import OutcomeCode
from hive.rules.retry import (
    FIRST_RETRY_SECONDS,
    FREE_RETRIES,
    MAX_RETRY_SECONDS,
    failures_after,
    is_failure,
    may_redispatch,
    retry_after_seconds,
    waiting_sentence,
)

FAILURES = [
    OutcomeCode.ENDED_BADLY,
    OutcomeCode.ENDED_UNEXPECTEDLY,
    OutcomeCode.REAPED_AT_BOOT,
    OutcomeCode.REAPED_RUNNER_SILENT,
    OutcomeCode.REAPED_NO_COMPLETION,
]
NOT_FAILURES = [
    OutcomeCode.FINISHED,
    OutcomeCode.HANDED_BACK,
    OutcomeCode.REFUSED,
    OutcomeCode.QUOTA_EXHAUSTED,
    OutcomeCode.CANCELLED,
    OutcomeCode.OTHER,
    None,
]


@pytest.mark.parametrize("outcome", FAILURES)
def test_an_agent_or_reaper_ending_is_a_failure(outcome):
    assert is_failure(outcome)
    assert failures_after(2, outcome) == 3


@pytest.mark.parametrize("outcome", NOT_FAILURES)
def test_finished_handed_back_and_provider_endings_are_not_failures_and_end_the_run(outcome):
    assert not is_failure(outcome)
    assert failures_after(5, outcome) == 0


@pytest.mark.parametrize(
    ("failures", "seconds"),
    [(-1, 0), (0, 0), (1, 0), (2, 60), (3, 120), (4, 240), (7, 1920), (8, 3600), (10**6, 3600)],
)
def test_the_first_failure_goes_again_at_once_then_a_minute_doubling_up_to_an_hour(
    failures, seconds
):
    assert retry_after_seconds(failures) == seconds


def test_the_constants_carry_the_documented_values():
    assert (FREE_RETRIES, FIRST_RETRY_SECONDS, MAX_RETRY_SECONDS) == (1, 60, 3600)


@pytest.mark.parametrize(
    ("failures", "since", "may"),
    [(0, 0, True), (1, 0, True), (2, 0, False), (2, 59.9, False), (2, 60, True), (3, 121, True)],
)
def test_an_issue_may_go_again_once_its_back_off_has_passed(failures, since, may):
    assert may_redispatch(failures, since) is may


def test_the_waiting_sentence_says_how_long_is_left_and_why():
    assert waiting_sentence(2, 20, "ended badly") == (
        "waits 40 s more: its last 2 attempts failed (the last: ended badly)"
    )
    assert waiting_sentence(3, 0, "reaped: runner silent") == (
        "waits 120 s more: its last 3 attempts failed (the last: reaped: runner silent)"
    )
    assert waiting_sentence(2, 59.9, "ended badly").startswith("waits 1 s more")
