"""RULES 4: the order's twelve states and sixteen events, every one of the 192 pairs."""

import itertools

import pytest

from hive.rules import states as s
from hive.rules.states import (
    ACCEPT,
    CANCELLED,
    EMPTY,
    EMPTY_FLOOR_SECONDS,
    ENDED,
    ESCALATE,
    EVENTS,
    HANDED_BACK,
    ILLEGAL,
    NONE,
    OUTCOMES,
    REAPED,
    REFUSED,
    RELEASED,
    RUNNING,
    SENDBACK,
    SENDBACK_CEILING,
    SENDBACK_FLOOR_SECONDS,
    STALE,
    STATES,
    WAIT,
    WAIT_FLOOR_SECONDS,
    ci_red_event,
    floor_passed,
    floor_seconds,
    is_outcome,
    next_state,
    reaped_no_completion,
)

# The table as RULES 4 writes it, spelled out by name and kept apart from the module's own.
LEGAL = {
    ("NONE", "START"): "RUNNING",
    ("NONE", "REFUSE"): "REFUSED",
    ("RUNNING", "END"): "ENDED",
    ("RUNNING", "REAP_STALL"): "REAPED",
    ("RUNNING", "REAP_BOOT"): "REAPED",
    **{
        (judged, f"VERDICT_{verdict}"): verdict
        for judged in ("ENDED", "WAIT")
        for verdict in ("ACCEPT", "SENDBACK", "ESCALATE", "WAIT", "EMPTY")
    },
    ("ENDED", "CRITERIA_CHANGED"): "STALE",
    ("ENDED", "FLOOR_PASSED"): "RELEASED",
    ("WAIT", "CRITERIA_CHANGED"): "STALE",
    ("WAIT", "FLOOR_PASSED"): "RELEASED",
    ("ACCEPT", "CI_RED_UNDER_CEILING"): "SENDBACK",
    ("ACCEPT", "CI_RED_AT_CEILING"): "ESCALATE",
    ("SENDBACK", "CRITERIA_CHANGED"): "STALE",
    ("SENDBACK", "FLOOR_PASSED"): "RELEASED",
    ("EMPTY", "CRITERIA_CHANGED"): "STALE",
    ("EMPTY", "FLOOR_PASSED"): "RELEASED",
    ("ESCALATE", "CRITERIA_CHANGED"): "STALE",
    ("STALE", "REDISPATCH"): "RUNNING",
    ("REAPED", "REDISPATCH"): "RUNNING",
    ("REFUSED", "REDISPATCH"): "RUNNING",
    ("RELEASED", "REDISPATCH"): "RUNNING",
}
STATE_NAMES = [
    "NONE", "RUNNING", "REFUSED", "ENDED", "WAIT", "ACCEPT",
    "SENDBACK", "ESCALATE", "EMPTY", "STALE", "REAPED", "RELEASED",
]  # fmt: skip
EVENT_NAMES = [
    "START", "REFUSE", "END", "END_OTHER_TURN", "REAP_STALL", "REAP_BOOT",
    "VERDICT_ACCEPT", "VERDICT_SENDBACK", "VERDICT_ESCALATE", "VERDICT_WAIT", "VERDICT_EMPTY",
    "CRITERIA_CHANGED", "CI_RED_UNDER_CEILING", "CI_RED_AT_CEILING", "FLOOR_PASSED",
    "REDISPATCH",
]  # fmt: skip


def test_the_states_and_events_are_numbered_as_written() -> None:
    assert [getattr(s, name) for name in STATE_NAMES] == list(range(12))
    assert [getattr(s, name) for name in EVENT_NAMES] == list(range(16))
    assert (STATES, EVENTS, ILLEGAL) == (12, 16, 99)


@pytest.mark.parametrize(("state", "event"), list(itertools.product(STATE_NAMES, EVENT_NAMES)))
def test_every_pair_is_legal_as_listed_or_illegal(state: str, event: str) -> None:
    expected = LEGAL.get((state, event))
    want = ILLEGAL if expected is None else getattr(s, expected)
    assert next_state(getattr(s, state), getattr(s, event)) == want


def test_the_table_has_31_legal_pairs_and_161_illegal_ones() -> None:
    pairs = list(itertools.product(range(STATES), range(EVENTS)))
    legal = [p for p in pairs if next_state(*p) != ILLEGAL]
    assert (len(pairs), len(legal)) == (192, len(LEGAL))


def test_an_older_turns_ending_never_closes_the_current_attempt() -> None:
    assert next_state(RUNNING, s.END_OTHER_TURN) == ILLEGAL


def test_a_state_or_event_outside_the_table_is_illegal() -> None:
    assert next_state(ILLEGAL, s.START) == ILLEGAL
    assert next_state(12, s.START) == ILLEGAL
    assert next_state(NONE, 16) == ILLEGAL
    assert next_state(-1, -1) == ILLEGAL


def test_the_floors_are_30_min_60_min_and_6_h() -> None:
    assert EMPTY_FLOOR_SECONDS == 30 * 60
    assert SENDBACK_FLOOR_SECONDS == 60 * 60
    assert WAIT_FLOOR_SECONDS == 6 * 3600
    assert floor_seconds(EMPTY) == 1800
    assert floor_seconds(SENDBACK) == 3600
    assert floor_seconds(WAIT) == 21600
    assert floor_seconds(ESCALATE) is None
    assert floor_seconds(ENDED) is None


def test_the_floor_passes_exactly_at_its_length() -> None:
    assert floor_passed(EMPTY, 1799) is False
    assert floor_passed(EMPTY, 1800) is True
    assert floor_passed(SENDBACK, 3599) is False
    assert floor_passed(SENDBACK, 3600) is True
    assert floor_passed(WAIT, 21599) is False
    assert floor_passed(WAIT, 21600) is True
    # an escalation has no floor: a person decides
    assert floor_passed(ESCALATE, 10**9) is False


def test_a_red_ci_sends_back_under_the_ceiling_and_escalates_at_it() -> None:
    assert SENDBACK_CEILING == 2
    assert ci_red_event(0) == s.CI_RED_UNDER_CEILING
    assert ci_red_event(1) == s.CI_RED_UNDER_CEILING
    assert ci_red_event(2) == s.CI_RED_AT_CEILING
    assert next_state(ACCEPT, ci_red_event(2)) == ESCALATE
    assert next_state(ACCEPT, ci_red_event(1)) == SENDBACK


def test_the_outcome_labels_are_a_closed_set() -> None:
    assert {
        "finished",
        "ended badly",
        "ended unexpectedly",
        "refused",
        "quota exhausted",
        "handed back",
        "reaped at boot",
        "reaped: runner silent",
        "cancelled",
    } == OUTCOMES
    assert HANDED_BACK == "handed back"
    assert CANCELLED == "cancelled"
    for label in OUTCOMES:
        assert is_outcome(label) is True


def test_the_stall_outcome_names_its_minutes() -> None:
    assert reaped_no_completion(120) == "reaped: no completion within 120 minutes"
    assert reaped_no_completion(1) == "reaped: no completion within 1 minutes"
    assert is_outcome(reaped_no_completion(120)) is True


def test_the_stall_outcome_refuses_a_bound_that_is_not_a_positive_number_of_minutes() -> None:
    with pytest.raises(ValueError, match="at least 1 minute, not 0"):
        reaped_no_completion(0)
    with pytest.raises(ValueError, match="over 64 characters"):
        reaped_no_completion(10**27)
    assert len(reaped_no_completion(10**27 - 1)) == 64


def test_anything_outside_the_set_is_not_an_outcome() -> None:
    assert is_outcome("Finished") is False
    assert is_outcome("finished: tests passed") is False
    assert is_outcome("") is False
    assert is_outcome("reaped: no completion within 0 minutes") is False
    assert is_outcome("reaped: no completion within 012 minutes") is False
    assert is_outcome("reaped: no completion within 120 minutes!") is False
    # the pattern alone is not enough: 65 characters is over the limit
    assert is_outcome(f"reaped: no completion within {10**27} minutes") is False


def test_a_released_or_reaped_order_runs_again_on_redispatch() -> None:
    for over in (STALE, REAPED, REFUSED, RELEASED):
        assert next_state(over, s.REDISPATCH) == RUNNING


def test_a_label_of_exactly_64_characters_is_still_an_outcome() -> None:
    label = reaped_no_completion(10**27 - 1)
    assert len(label) == 64
    assert is_outcome(label) is True
