"""DESIGN 11: a review that cannot run is tried again on a doubling pause, then
escalated; the vectors pin each step."""

import pytest

from hive.rules.review_failures import (
    CRASH,
    ERROR,
    NO_VERDICT,
    REASONS,
    REFUSED,
    REVIEW_FAILURES_MAX,
    SHAPER,
    START,
    TIMEOUT,
    after_failure,
    failure_reason,
)
from hive.rules.states import TurnOutcome as T


def test_the_default_maximum_is_three() -> None:
    assert REVIEW_FAILURES_MAX == 3
    assert REASONS == ("start", "crash", "timeout", "no_verdict", "refused", "error")


@pytest.mark.parametrize(
    ("outcome", "bound", "refused", "judged", "criteria", "reason"),
    [
        (T.FINISHED, False, False, 2, 2, None),  # a verdict on every criterion
        (T.FINISHED, False, False, 1, 2, NO_VERDICT),  # one left unjudged
        (T.FINISHED, False, False, 0, 1, NO_VERDICT),  # nothing said at all
        (T.ENDED_BADLY, False, False, 2, 2, CRASH),  # exit 3 even with lines
        (T.ENDED_UNEXPECTEDLY, False, False, 0, 1, CRASH),  # a signal
        (T.STOPPED, True, False, 0, 1, TIMEOUT),  # its bound stopped it
        (T.REFUSED, False, True, 0, 1, REFUSED),  # the provider refused its key
        (T.STOPPED, True, True, 0, 1, REFUSED),  # a refusal wins over the bound
    ],
)
def test_the_reason_a_review_gave_no_verdict(
    outcome: T, bound: bool, refused: bool, judged: int, criteria: int, reason: str | None
) -> None:
    got = failure_reason(outcome, bound=bound, refused=refused, judged=judged, criteria=criteria)
    assert got == reason


def test_a_shell_that_found_no_program_did_not_start() -> None:
    for code, reason in ((127, START), (126, START), (1, CRASH), (None, CRASH)):
        got = failure_reason(
            T.ENDED_BADLY, bound=False, refused=False, judged=0, criteria=1, exit_code=code
        )
        assert got == reason


# (failures before, last pause, max) -> (escalate, failures, next pause)
VECTORS = [
    ((0, 0, 3), (False, 1, 30)),
    ((1, 30, 3), (False, 2, 60)),
    ((2, 60, 3), (True, 3, 0)),
    ((0, 0, 1), (True, 1, 0)),  # a maximum of one escalates at once
    ((5, 900, 10), (False, 6, 900)),  # the pause is capped
    ((3, 480, 10), (False, 4, 900)),
    ((-1, 0, 3), (False, 1, 30)),  # a negative count is read as none
    ((9, 0, 3), (True, 10, 0)),  # already past the maximum: escalated again
]


@pytest.mark.parametrize(("given", "expected"), VECTORS)
def test_failures_pause_doubling_then_escalate(
    given: tuple[int, int, int], expected: tuple[bool, int, int]
) -> None:
    before, pause, most = given
    step = after_failure(START, "no program claude", before, pause, most)
    assert (step.escalate, step.failures, step.pause_seconds) == expected


def test_the_pause_starts_where_the_caller_says() -> None:
    assert after_failure(CRASH, "", 0, 0, 3, pause_start_seconds=1).pause_seconds == 1
    assert after_failure(CRASH, "", 1, 1, 3, pause_start_seconds=1).pause_seconds == 2


def test_the_note_says_why_how_often_and_what_next() -> None:
    first = after_failure(START, "the agent could not start: no program claude", 0, 0)
    assert first.note == (
        "the reviewer could not start (the agent could not start: no program claude): "
        "tried again in 30 s (failure 1 of 3)"
    )
    last = after_failure(CRASH, "exit 3", 2, 60)
    assert last.note == (
        "the reviewer did not finish (exit 3); the review failed 3 times in a row, so a "
        "person decides (approve, reject with a note, or fix the reviewer)"
    )


def test_a_detail_is_one_line_and_bounded_and_may_be_empty() -> None:
    step = after_failure(ERROR, "line one\nline two  " + "x" * 1000, 0, 0)
    assert "\n" not in step.note and "line one line two" in step.note
    assert len(step.note) < 400
    assert after_failure(TIMEOUT, "  ", 0, 0).note.startswith(
        "the reviewer passed its time bound: tried again"
    )
    assert after_failure(REFUSED, "", 0, 0).note.startswith("the provider refused")
    assert after_failure(NO_VERDICT, "", 0, 0).note.startswith("the reviewer gave no verdict")


def test_a_shaping_turn_has_the_same_floor_in_its_own_words() -> None:
    first = after_failure(NO_VERDICT, "", 0, 0, who=SHAPER)
    assert first.note.startswith("the shaper gave no proposal: tried again in 30 s")
    assert after_failure(START, "", 0, 0, who=SHAPER).note.startswith("the shaper could not")
    last = after_failure(ERROR, "x", 2, 60, who=SHAPER)
    assert last.escalate and last.note.startswith("the shaping could not run (x)")
    assert last.note.endswith(
        "the shaping failed 3 times in a row, so a person decides "
        "(write the issue's boundary and criteria, or fix the shaper)"
    )
    with pytest.raises(ValueError, match="unknown turn 'bee'"):
        after_failure(ERROR, "", 0, 0, who="bee")


def test_an_unknown_reason_or_a_maximum_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown review failure 'lost'"):
        after_failure("lost", "", 0, 0)
    with pytest.raises(ValueError, match="at most 0 review failures"):
        after_failure(START, "", 0, 0, 0)
