"""RULES 4's floors: EMPTY 30 min and SENDBACK 60 min from their verdict, WAIT 6 h from
the work's finish (the reviewer's visits keep stamping a waiting row's review)."""

from hive.rules.floors import floor_age_seconds, released_at_floor
from hive.rules.states import ACCEPT, EMPTY, ENDED, ESCALATE, SENDBACK, WAIT

HOUR = 3600


def test_empty_and_sendback_pass_their_floor_counted_from_their_verdict() -> None:
    assert not released_at_floor(EMPTY, 10 * HOUR, 30 * 60 - 1)
    assert released_at_floor(EMPTY, 10 * HOUR, 30 * 60)
    assert not released_at_floor(SENDBACK, 10 * HOUR, 60 * 60 - 1)
    assert released_at_floor(SENDBACK, 10 * HOUR, 60 * 60)


def test_a_row_never_reviewed_counts_from_its_finish() -> None:
    assert floor_age_seconds(SENDBACK, 100.0, None) == 100.0
    assert released_at_floor(EMPTY, 30 * 60, None)


def test_wait_counts_from_the_finish_however_recent_its_last_visit() -> None:
    assert floor_age_seconds(WAIT, 7 * HOUR, 60.0) == 7 * HOUR
    assert released_at_floor(WAIT, 6 * HOUR, 30.0)
    assert not released_at_floor(WAIT, 6 * HOUR - 1, 30.0)


def test_a_state_with_no_floor_is_never_released_by_one() -> None:
    for state in (ENDED, ACCEPT, ESCALATE):
        assert not released_at_floor(state, 100 * HOUR, 100 * HOUR)
