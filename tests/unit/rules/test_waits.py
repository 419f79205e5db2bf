"""RULES 9: waits, their claims, and the scheduler's poll."""

from hive.rules.waits import (
    CANCELLED,
    CLAIM_BATCH,
    CLAIM_TTL_SECONDS,
    EXPIRED,
    RESOLVED,
    SCHEDULER_POLL_MIN_SECONDS,
    SCHEDULER_POLL_SECONDS,
    WAIT_MAX_SECONDS,
    WAITING,
    claim_row,
    pickup_after_seconds,
    poll_delay_seconds,
    wait_move,
    wait_problem,
    wakes_owner,
    write_lands,
)


def test_the_constants_are_pinned() -> None:
    assert (WAITING, RESOLVED, EXPIRED, CANCELLED) == (0, 1, 2, 3)
    assert WAIT_MAX_SECONDS == 86400
    assert CLAIM_TTL_SECONDS == 60
    assert CLAIM_BATCH == 32
    assert (SCHEDULER_POLL_SECONDS, SCHEDULER_POLL_MIN_SECONDS) == (15, 1)


def test_only_a_waiting_row_moves() -> None:
    assert wait_move(WAITING, RESOLVED) == RESOLVED
    assert wait_move(WAITING, EXPIRED) == EXPIRED
    assert wait_move(WAITING, CANCELLED) == CANCELLED
    assert wait_move(WAITING, WAITING) is None


def test_the_first_resolution_wins() -> None:
    for done in (RESOLVED, EXPIRED, CANCELLED):
        for late in (WAITING, RESOLVED, EXPIRED, CANCELLED):
            assert wait_move(done, late) is None


def test_the_owner_is_woken_on_resolved_or_expired_only_by_the_moving_write() -> None:
    assert wakes_owner(True, RESOLVED) is True
    assert wakes_owner(True, EXPIRED) is True
    assert wakes_owner(True, CANCELLED) is False
    assert wakes_owner(False, RESOLVED) is False
    assert wakes_owner(False, EXPIRED) is False


def test_a_wait_has_a_key_a_wake_time_or_both() -> None:
    assert wait_problem("ci:42", None) is None
    assert wait_problem(None, 60) is None
    assert wait_problem("ci:42", 60) is None
    assert wait_problem(None, None) == "a wait needs a key, a wake time, or both"
    assert wait_problem("  ", None) == "a wait's key is empty"


def test_a_wait_wakes_within_a_day() -> None:
    assert wait_problem(None, WAIT_MAX_SECONDS) is None
    assert wait_problem(None, 0) is None
    assert wait_problem(None, WAIT_MAX_SECONDS + 1) == "a wait wakes within 0..86400 s, not 86401 s"
    assert wait_problem(None, -1) == "a wait wakes within 0..86400 s, not -1 s"


def test_a_claim_bumps_the_epoch_and_moves_the_due_time_a_minute_ahead() -> None:
    assert claim_row(4, 1000) == (5, 1060)
    epoch, _ = claim_row(4, 1000)
    assert write_lands(5, epoch) is True
    assert write_lands(6, epoch) is False


def test_a_claimed_row_is_picked_up_after_the_rest_of_its_claim() -> None:
    assert pickup_after_seconds(False, 0) == 0
    assert pickup_after_seconds(False, 30) == 0
    assert pickup_after_seconds(True, 0) == 60
    assert pickup_after_seconds(True, 59) == 1
    assert pickup_after_seconds(True, 60) == 0
    assert pickup_after_seconds(True, 600) == 0


def test_the_scheduler_polls_every_15_s_sooner_for_a_due_row_never_under_1_s() -> None:
    assert poll_delay_seconds(None) == 15
    assert poll_delay_seconds(100) == 15
    assert poll_delay_seconds(15) == 15
    assert poll_delay_seconds(7) == 7
    assert poll_delay_seconds(1) == 1
    assert poll_delay_seconds(0) == 1
    assert poll_delay_seconds(-30) == 1
