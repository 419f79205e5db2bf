"""RULES 2: stopping a turn (abort, grace, escalation) and what an abort does to a step."""

from hive.rules.signals import X_KILL, stop_signal
from hive.rules.turn_stop import (
    ESC_ABANDON,
    ESC_KILL_GROUP,
    ESC_NOTHING,
    IN_FLIGHT_MAX,
    KILL_LANDS_MS,
    LANE_FREE_MS,
    STEP_CUT,
    STEP_RUN,
    STEP_SKIP,
    TURN_STOP_GRACE_MS,
    escalation,
    in_flight,
    step_on_abort,
)


def test_the_grace_and_the_kill_fit_before_the_lane_is_free() -> None:
    assert (TURN_STOP_GRACE_MS, KILL_LANDS_MS, LANE_FREE_MS) == (3000, 2000, 5000)
    assert TURN_STOP_GRACE_MS + KILL_LANDS_MS <= LANE_FREE_MS
    assert stop_signal(LANE_FREE_MS, TURN_STOP_GRACE_MS) == X_KILL


def test_an_ended_turn_needs_no_escalation() -> None:
    assert escalation(True, True) == ESC_NOTHING
    assert escalation(False, True) == ESC_NOTHING


def test_a_process_turn_is_killed_with_its_whole_group() -> None:
    assert escalation(True, False) == ESC_KILL_GROUP


def test_a_thread_turn_is_abandoned_and_still_counted() -> None:
    assert escalation(False, False) == ESC_ABANDON
    assert in_flight(2, 1) == 3
    assert in_flight(0, 0) == 0
    assert in_flight(0, 4) == 4


def test_in_flight_saturates_instead_of_overflowing() -> None:
    assert in_flight(IN_FLIGHT_MAX, 1) == IN_FLIGHT_MAX
    assert in_flight(IN_FLIGHT_MAX - 1, 1) == IN_FLIGHT_MAX


def test_a_finalizer_always_runs() -> None:
    assert step_on_abort(False, False, True) == STEP_RUN
    assert step_on_abort(True, True, True) == STEP_RUN
    assert step_on_abort(False, True, True) == STEP_RUN


def test_a_started_shared_write_runs_to_its_end_and_an_unstarted_one_never_starts() -> None:
    assert step_on_abort(True, True, False) == STEP_RUN
    assert step_on_abort(False, True, False) == STEP_SKIP


def test_everything_else_is_cut() -> None:
    assert step_on_abort(True, False, False) == STEP_CUT
    assert step_on_abort(False, False, False) == STEP_CUT
