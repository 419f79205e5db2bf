import pytest

from hive.rules.board import COLUMNS, SNAPSHOT, Column, catch_up, column_of
from hive.rules.states import (
    ACCEPT,
    EMPTY,
    ENDED,
    ESCALATE,
    REAPED,
    REFUSED,
    RELEASED,
    RUNNING,
    SENDBACK,
    STALE,
    WAIT,
)


def col(issue_open=True, order_state=None, merged=False, open_blockers=0):
    return column_of(
        issue_open=issue_open,
        order_state=order_state,
        merged=merged,
        open_blockers=open_blockers,
    )


def test_the_columns_read_left_to_right_as_design_10_names_them():
    assert [c.value for c in COLUMNS] == [
        "backlog", "blocked", "running", "review", "done", "dropped",
    ]  # fmt: skip


def test_an_open_issue_with_no_order_waits_in_the_backlog():
    assert col() is Column.BACKLOG


def test_an_open_blocker_puts_an_idle_issue_in_blocked():
    assert col(open_blockers=1) is Column.BLOCKED
    assert col(order_state=SENDBACK, open_blockers=2) is Column.BLOCKED


def test_an_order_in_flight_is_running_even_with_a_blocker_added_later():
    assert col(order_state=RUNNING) is Column.RUNNING
    assert col(order_state=RUNNING, open_blockers=1) is Column.RUNNING


@pytest.mark.parametrize("state", [ENDED, WAIT, ACCEPT, ESCALATE])
def test_work_being_judged_or_waiting_for_a_person_is_in_review(state):
    assert col(order_state=state) is Column.REVIEW
    assert col(order_state=state, open_blockers=1) is Column.REVIEW


@pytest.mark.parametrize("state", [SENDBACK, EMPTY, STALE, REAPED, REFUSED, RELEASED])
def test_an_attempt_that_goes_again_puts_the_issue_back_in_the_backlog(state):
    assert col(order_state=state) is Column.BACKLOG


def test_merged_work_is_done_open_or_closed_and_a_close_without_merge_is_dropped():
    assert col(order_state=ACCEPT, merged=True) is Column.DONE
    assert col(issue_open=False, order_state=ACCEPT, merged=True) is Column.DONE
    assert col(issue_open=False) is Column.DROPPED
    assert col(issue_open=False, order_state=RUNNING) is Column.DROPPED


def test_a_stream_that_saw_nothing_of_this_epoch_gets_a_snapshot():
    assert catch_up(None, oldest_kept=1, newest=10) == SNAPSHOT


def test_a_stream_resumes_after_the_last_event_it_saw_while_it_is_kept():
    assert catch_up(10, oldest_kept=1, newest=10) == 11  # missed nothing
    assert catch_up(4, oldest_kept=1, newest=10) == 5
    assert catch_up(0, oldest_kept=1, newest=10) == 1  # the page was drawn before event 1


def test_a_stream_whose_missed_events_are_dropped_gets_a_snapshot():
    assert catch_up(3, oldest_kept=5, newest=10) == SNAPSHOT
    assert catch_up(4, oldest_kept=5, newest=10) == 5


def test_an_event_id_from_the_future_gets_a_snapshot():
    assert catch_up(11, oldest_kept=1, newest=10) == SNAPSHOT


def test_a_card_offers_what_its_column_may_allow():
    from hive.rules.board import ACTIONS, actions_of

    assert ACTIONS == ("approve", "reject", "cancel", "close", "reopen")
    assert actions_of(Column.REVIEW) == ("approve", "reject", "close")
    assert actions_of(Column.RUNNING) == ("cancel", "close")
    assert actions_of(Column.BACKLOG) == actions_of(Column.BLOCKED) == ("close",)
    assert actions_of(Column.DONE) == ()
    assert actions_of(Column.DROPPED) == ("reopen",)
