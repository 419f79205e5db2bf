"""RULES 1: the signals a turn's timer and a stopper send."""

from hive.rules.signals import (
    TURN_MAX_SECONDS,
    X_CRASH,
    X_KILL,
    X_KILLED,
    X_NONE,
    X_NORMAL,
    X_SHUTDOWN,
    stop_signal,
    turn_signal,
)


def test_the_exit_reasons_are_pinned() -> None:
    assert (X_NORMAL, X_SHUTDOWN, X_KILL, X_KILLED, X_CRASH, X_NONE) == (0, 1, 2, 3, 4, 99)
    assert TURN_MAX_SECONDS == 3600


def test_a_turn_is_killed_once_it_reaches_its_bound() -> None:
    assert turn_signal(300, 300) == X_KILL
    assert turn_signal(299, 300) == X_NONE
    assert turn_signal(301, 300) == X_KILL


def test_a_bound_of_zero_means_the_hour() -> None:
    assert turn_signal(3599, 0) == X_NONE
    assert turn_signal(3600, 0) == X_KILL
    assert turn_signal(0, 0) == X_NONE


def test_a_stopper_sends_shutdown_then_waits_then_kills() -> None:
    assert stop_signal(5000, 3000) == X_KILL
    assert stop_signal(3000, 3000) == X_KILL
    assert stop_signal(2999, 3000) == X_NONE
    assert stop_signal(1, 3000) == X_NONE
    assert stop_signal(0, 3000) == X_SHUTDOWN


def test_a_timeout_of_zero_is_a_brutal_kill() -> None:
    assert stop_signal(0, 0) == X_KILL
