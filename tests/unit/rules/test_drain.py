"""The drain card's tests and invariants (seed 002, drain.t27), one for one, same asserts."""

from hive.rules import leases, signals, turn_stop, waits
from hive.rules.drain import (
    DV_DONE,
    DV_HAND_BACK,
    DV_HOLD,
    DV_LEAVE,
    DV_STOP,
    EXIT_NOW,
    EXIT_SECONDS,
    EXIT_WAIT,
    HAND_BACK_SECONDS,
    KIND_NAMES,
    LANE_FREE_MS,
    REVIEW_BOUND_SECONDS,
    STOP_LOSS_SECONDS,
    TASK_LEASE_TTL_LIT,
    TURN_STOP_GRACE_MS,
    VERDICT_NAMES,
    WK_BEE,
    WK_JOB,
    WK_REVIEW,
    WK_ROUND,
    WK_WAIT,
    WORK_KINDS,
    X_KILL_LIT,
    X_NONE_LIT,
    bee_free_after_seconds,
    bound_of,
    drain_cap_seconds,
    drain_verdict,
    exit_step,
    redo_is_cheap,
    row_keeps,
    takes_new_work,
    wait_free_after_seconds,
)
from hive.rules.leases import reclaimable
from hive.rules.reviewer import REVIEW_ROW_SECONDS
from hive.rules.signals import stop_signal, turn_signal

# --- tests ----------------------------------------------------------------------------


def test_rows_are_left_to_the_next_process() -> None:
    assert row_keeps(WK_WAIT) is True
    assert row_keeps(WK_JOB) is True
    assert row_keeps(WK_ROUND) is True
    assert row_keeps(WK_REVIEW) is False
    assert row_keeps(WK_BEE) is False
    assert drain_verdict(WK_WAIT, False, 0, 1800) == DV_LEAVE
    assert drain_verdict(WK_JOB, False, 0, 1800) == DV_LEAVE
    assert drain_verdict(WK_ROUND, False, 0, 1800) == DV_LEAVE
    # past the cap too: a row is never handed back, it is simply there
    assert drain_verdict(WK_WAIT, False, 1800, 1800) == DV_LEAVE


def test_a_review_is_stopped_at_the_exit_not_waited_for() -> None:
    assert bound_of(WK_REVIEW) == 300
    assert redo_is_cheap(300) is True
    assert redo_is_cheap(301) is False
    assert drain_verdict(WK_REVIEW, False, 0, 1800) == DV_STOP
    assert drain_verdict(WK_REVIEW, False, 1800, 1800) == DV_STOP


def test_a_bee_is_held_until_it_ends_or_the_cap() -> None:
    assert bound_of(WK_BEE) == 0
    # its bound is TURN_MAX_SECONDS: a stop could throw away an hour
    assert redo_is_cheap(0) is False
    assert redo_is_cheap(3600) is False
    assert drain_verdict(WK_BEE, False, 0, 1800) == DV_HOLD
    assert drain_verdict(WK_BEE, False, 1799, 1800) == DV_HOLD
    assert drain_verdict(WK_BEE, False, 1800, 1800) == DV_HAND_BACK
    assert drain_verdict(WK_BEE, False, 4000, 1800) == DV_HAND_BACK
    # a bee that ended is owed nothing, at any time
    assert drain_verdict(WK_BEE, True, 0, 1800) == DV_DONE
    assert drain_verdict(WK_BEE, True, 1800, 1800) == DV_DONE
    assert drain_verdict(WK_REVIEW, True, 0, 1800) == DV_DONE
    assert drain_verdict(WK_WAIT, True, 0, 1800) == DV_DONE


def test_a_cap_of_zero_hands_every_bee_back_at_once() -> None:
    assert drain_verdict(WK_BEE, False, 0, 0) == DV_HAND_BACK


def test_nothing_starts_a_bee_here_and_the_rest_runs_only_while_held() -> None:
    assert takes_new_work(True, 3) is False
    assert takes_new_work(True, 0) is False
    assert takes_new_work(False, 1) is True
    assert takes_new_work(False, 0) is False


def test_the_cap_is_todays_drain_and_fits_the_platform() -> None:
    # today: runner 1800, Railway 1830 -> 1800, no bee cut sooner than before
    assert drain_cap_seconds(1800, 1830) == 1800
    # a platform drain too short for the hand-back moves the cap earlier
    assert drain_cap_seconds(1800, 1800) == 1775
    assert drain_cap_seconds(1800, 26) == 1
    assert drain_cap_seconds(1800, 25) == 0
    assert drain_cap_seconds(1800, 10) == 0
    # a shorter runner drain is the owner's to choose, and it stands
    assert drain_cap_seconds(600, 1830) == 600
    assert drain_cap_seconds(0, 1830) == 0
    # a platform drain this process cannot read leaves the runner's drain alone
    assert drain_cap_seconds(1800, 0) == 1800


def test_the_exit_waits_for_held_work_and_for_stops_to_land() -> None:
    assert exit_step(1, 0, 0) == EXIT_WAIT
    assert exit_step(2, 3, 9000) == EXIT_WAIT
    assert exit_step(0, 0, 0) == EXIT_NOW
    assert exit_step(0, 2, 0) == EXIT_WAIT
    assert exit_step(0, 2, 4999) == EXIT_WAIT
    assert exit_step(0, 2, 5000) == EXIT_NOW


def test_a_handed_back_bee_is_free_at_once_and_a_left_one_waits_out_its_lease() -> None:
    assert bee_free_after_seconds(True, 0) == 0
    assert bee_free_after_seconds(True, 100) == 0
    assert bee_free_after_seconds(False, 0) == 180
    assert bee_free_after_seconds(False, 45) == 135
    assert bee_free_after_seconds(False, 179) == 1
    assert bee_free_after_seconds(False, 180) == 0
    assert bee_free_after_seconds(False, 4294967295) == 0


def test_a_wait_row_is_free_after_the_rest_of_its_claim() -> None:
    assert wait_free_after_seconds(False, 0) == 0
    assert wait_free_after_seconds(True, 0) == 60
    assert wait_free_after_seconds(True, 45) == 15
    assert wait_free_after_seconds(True, 60) == 0


# --- invariants -----------------------------------------------------------------------


def test_the_verdicts_and_kinds_are_pinned() -> None:
    assert DV_DONE == 0
    assert DV_LEAVE == 1
    assert DV_STOP == 2
    assert DV_HOLD == 3
    assert DV_HAND_BACK == 4
    assert WK_BEE == 0
    assert WK_WAIT == 4
    assert WORK_KINDS == 5
    assert EXIT_NOW == 0
    assert EXIT_WAIT == 1


def test_the_literals_match_the_cards_they_come_from() -> None:
    # actors.t27: turn_signal answers X_KILL at the bound and X_NONE before it
    assert turn_signal(300, 300) == X_KILL_LIT
    assert turn_signal(299, 300) == X_NONE_LIT
    # control.t27: the task lease lapses at TASK_LEASE_TTL_SECONDS
    assert reclaimable(False, TASK_LEASE_TTL_LIT) is True
    assert reclaimable(False, TASK_LEASE_TTL_LIT - 1) is False
    # turn_stop.t27: by LANE_FREE_MS a stopped turn's grace has passed (stop_signal says X_KILL)
    assert stop_signal(LANE_FREE_MS, TURN_STOP_GRACE_MS) == X_KILL_LIT
    assert stop_signal(TURN_STOP_GRACE_MS - 1, TURN_STOP_GRACE_MS) == X_NONE_LIT


def test_a_review_is_cheap_to_redo_and_a_bee_is_not() -> None:
    assert STOP_LOSS_SECONDS == REVIEW_BOUND_SECONDS
    assert redo_is_cheap(REVIEW_BOUND_SECONDS) is True
    assert redo_is_cheap(0) is False


def test_the_hand_back_fits_between_todays_drain_and_the_platform_kill() -> None:
    assert HAND_BACK_SECONDS + EXIT_SECONDS <= 30
    assert drain_cap_seconds(1800, 1830) == 1800


# --- beyond the card: its literals are the neighbouring modules' constants -------------


def test_the_cards_literals_are_the_neighbouring_modules_constants() -> None:
    assert X_KILL_LIT == signals.X_KILL
    assert X_NONE_LIT == signals.X_NONE
    assert TASK_LEASE_TTL_LIT == leases.TASK_LEASE_TTL_SECONDS
    assert TURN_STOP_GRACE_MS == turn_stop.TURN_STOP_GRACE_MS
    assert LANE_FREE_MS == turn_stop.LANE_FREE_MS
    assert REVIEW_BOUND_SECONDS == REVIEW_ROW_SECONDS
    assert wait_free_after_seconds(True, 0) == waits.CLAIM_TTL_SECONDS


def test_every_kind_and_verdict_has_a_name() -> None:
    assert len(KIND_NAMES) == WORK_KINDS
    assert KIND_NAMES[WK_BEE] == "bee"
    assert KIND_NAMES[WK_WAIT] == "wait"
    assert VERDICT_NAMES[DV_HAND_BACK] == "hand back"
    assert VERDICT_NAMES[DV_DONE] == "done"


def test_a_bee_handed_back_right_at_the_cap_of_today_is_free_at_once() -> None:
    cap = drain_cap_seconds(1800, 1830)
    assert drain_verdict(WK_BEE, False, cap - 1, cap) == DV_HOLD
    assert drain_verdict(WK_BEE, False, cap, cap) == DV_HAND_BACK
    assert bee_free_after_seconds(True, 0) == 0


def test_a_platform_drain_of_1000_moves_the_cap_to_975() -> None:
    # the seed lesson's "cut the platform drain to 1000 s"
    assert drain_cap_seconds(1800, 1000) == 975
    assert drain_verdict(WK_BEE, False, 975, drain_cap_seconds(1800, 1000)) == DV_HAND_BACK


def test_a_platform_drain_between_the_exit_and_the_hand_back_still_gives_a_cap_of_zero() -> None:
    # 16..25 s: more than the exit alone, not enough for the hand-back and the exit
    for platform in range(EXIT_SECONDS, HAND_BACK_SECONDS + EXIT_SECONDS + 1):
        assert drain_cap_seconds(1800, platform) == 0
