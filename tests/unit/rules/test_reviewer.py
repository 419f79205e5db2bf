"""RULES 8: the reviewer's concurrency, its pause, its verdict and the merge gate."""

from hive.rules.reviewer import (
    REVIEW_CONCURRENCY_MAX,
    REVIEW_ROW_SECONDS,
    REVIEWER_TICK_SECONDS,
    WAIT_PAUSE_CAP_SECONDS,
    WAIT_PAUSE_START_SECONDS,
    ReviewRow,
    merge_gate_open,
    next_pause_seconds,
    review_concurrency,
    review_of,
    rows_to_review,
)
from hive.rules.states import ACCEPT, ESCALATE, SENDBACK, WAIT


def test_the_constants_are_pinned() -> None:
    assert REVIEWER_TICK_SECONDS == 10
    assert REVIEW_ROW_SECONDS == 300
    assert REVIEW_CONCURRENCY_MAX == 16
    assert (WAIT_PAUSE_START_SECONDS, WAIT_PAUSE_CAP_SECONDS) == (30, 900)


def test_no_review_runs_when_nothing_waits() -> None:
    assert review_concurrency(0, 8, 64_000, 1000) == 0


def test_concurrency_is_the_least_of_lanes_sixteen_memory_and_waiting() -> None:
    assert review_concurrency(100, 4, 64_000, 1000) == 4  # lanes
    assert review_concurrency(100, 40, 64_000, 1000) == 16  # the cap
    assert review_concurrency(100, 40, 5_500, 1000) == 5  # memory
    assert review_concurrency(3, 40, 64_000, 1000) == 3  # waiting


def test_unmeasured_memory_allows_one_review() -> None:
    assert review_concurrency(10, 8, None, 1000) == 1
    assert review_concurrency(10, 8, 64_000, None) == 1
    assert review_concurrency(10, 8, 64_000, 0) == 1


def test_concurrency_never_falls_below_one_while_something_waits() -> None:
    assert review_concurrency(5, 0, 64_000, 1000) == 1
    assert review_concurrency(5, 8, 100, 1000) == 1


def test_the_never_visited_row_goes_first_then_the_longest_since_its_visit() -> None:
    rows = [ReviewRow(1, 500), ReviewRow(2, None), ReviewRow(3, 100), ReviewRow(4, 100)]
    assert rows_to_review(rows, frozenset(), 10) == [2, 3, 4, 1]
    assert rows_to_review(rows, frozenset(), 2) == [2, 3]


def test_a_row_is_never_reviewed_twice_at_once() -> None:
    rows = [ReviewRow(1, 500), ReviewRow(2, None), ReviewRow(3, 100)]
    assert rows_to_review(rows, frozenset({2, 3}), 10) == [1]
    assert rows_to_review(rows, frozenset(), 0) == []
    assert rows_to_review(rows, frozenset(), -1) == []


def test_a_waiting_row_pauses_30_s_doubling_to_900_s() -> None:
    pauses = [0]
    for _ in range(7):
        pauses.append(next_pause_seconds(pauses[-1], WAIT))
    assert pauses == [0, 30, 60, 120, 240, 480, 900, 900]


def test_any_other_answer_resets_the_pause() -> None:
    for verdict in (ACCEPT, SENDBACK, ESCALATE):
        assert next_pause_seconds(480, verdict) == 0


def test_no_criteria_escalates() -> None:
    assert review_of(0, 0, 0, 3, 0) == ESCALATE


def test_criteria_not_all_judged_wait() -> None:
    assert review_of(3, 2, 2, 3, 0) == WAIT


def test_all_met_accepts_only_committed_work() -> None:
    assert review_of(3, 3, 3, 1, 0) == ACCEPT
    assert review_of(3, 3, 3, 0, 0) == ESCALATE


def test_some_unmet_sends_back_then_escalates_after_two_send_backs() -> None:
    assert review_of(3, 3, 2, 1, 0) == SENDBACK
    assert review_of(3, 3, 2, 1, 1) == SENDBACK
    assert review_of(3, 3, 2, 1, 2) == ESCALATE


def test_the_merge_gate_opens_only_when_every_check_that_ran_passed() -> None:
    assert merge_gate_open(3, 3) is True
    assert merge_gate_open(1, 1) is True
    assert merge_gate_open(3, 2) is False


def test_zero_checks_never_open_the_gate() -> None:
    assert merge_gate_open(0, 0) is False


def test_one_waiting_row_gets_one_review() -> None:
    assert review_concurrency(1, 8, 64_000, 1000) == 1


def test_a_row_visited_at_time_zero_goes_before_one_visited_later() -> None:
    rows = [ReviewRow(1, 1), ReviewRow(2, 0)]
    assert rows_to_review(rows, frozenset(), 10) == [2, 1]


def test_a_pause_below_the_start_restarts_at_30_s() -> None:
    assert next_pause_seconds(1, WAIT) == 30
    assert next_pause_seconds(29, WAIT) == 30
    assert next_pause_seconds(30, WAIT) == 60


def test_one_criterion_met_with_a_commit_is_accepted() -> None:
    assert review_of(1, 1, 1, 1, 0) == ACCEPT
    assert review_of(1, 1, 0, 1, 0) == SENDBACK
