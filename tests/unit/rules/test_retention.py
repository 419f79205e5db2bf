"""Retention's rule: what is past the window, which worktree goes, when to repack."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from hive.rules.jobs import JobState
from hive.rules.retention import (
    PASS_AGAIN_SECONDS,
    PASS_EVERY_SECONDS,
    REPACK_AFTER_BRANCHES,
    REPACK_EVERY_SECONDS,
    RETENTION_DAYS_DEFAULT,
    WORKTREE_MIN_AGE_SECONDS,
    Order,
    cutoff,
    issue_due,
    job_prunable,
    next_pass_seconds,
    repack_due,
    report_due,
    wait_prunable,
    worktree_removable,
)
from hive.rules.waits import WaitState
from hive.settings import Settings, SettingsError

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def test_the_cutoff_is_the_window_before_now() -> None:
    assert cutoff(NOW, 30) == NOW - timedelta(days=30)
    with pytest.raises(ValueError):
        cutoff(NOW, 0)


def test_a_closed_issue_is_due_at_the_window_and_not_a_second_before() -> None:
    at_edge = NOW - timedelta(days=30)
    assert issue_due(at_edge, False, NOW, 30)
    assert not issue_due(at_edge + timedelta(seconds=1), False, NOW, 30)
    assert issue_due(NOW - timedelta(days=400), False, NOW, 30)


def test_an_open_issue_or_one_with_an_order_in_flight_is_never_due() -> None:
    assert not issue_due(None, False, NOW, 30)
    assert not issue_due(NOW - timedelta(days=400), True, NOW, 30)


def test_a_report_is_due_past_the_window() -> None:
    assert report_due(NOW - timedelta(days=7, seconds=1), NOW, 7)
    assert not report_due(NOW - timedelta(days=6), NOW, 7)


def test_a_job_goes_once_it_has_ended_and_never_while_ready_or_parked() -> None:
    ended = {JobState.DONE, JobState.FAILED, JobState.CANCELLED}
    assert {s for s in JobState if job_prunable(s)} == ended
    assert not job_prunable(JobState.READY)
    assert not job_prunable(JobState.PARKED)


def test_a_wait_goes_with_its_job_once_it_has_moved_and_never_while_waiting() -> None:
    assert not wait_prunable(WaitState.WAITING)
    assert {s for s in WaitState if wait_prunable(s)} == {
        WaitState.RESOLVED,
        WaitState.EXPIRED,
        WaitState.CANCELLED,
    }


def test_a_worktree_goes_when_its_order_is_not_in_flight_and_it_is_old_enough() -> None:
    old = WORKTREE_MIN_AGE_SECONDS
    assert worktree_removable(Order.ENDED, old)
    assert worktree_removable(Order.NONE, old)
    assert not worktree_removable(Order.IN_FLIGHT, old * 100)
    assert not worktree_removable(Order.ENDED, old - 1)


def test_the_checkout_is_repacked_daily_or_after_many_branches_went() -> None:
    assert not repack_due(0.0, 0)
    assert not repack_due(REPACK_EVERY_SECONDS - 1, REPACK_AFTER_BRANCHES - 1)
    assert repack_due(REPACK_EVERY_SECONDS, 0)
    assert repack_due(0.0, REPACK_AFTER_BRANCHES)


def test_a_full_batch_brings_the_next_pass_soon() -> None:
    assert next_pass_seconds(True) == PASS_AGAIN_SECONDS < next_pass_seconds(False)
    assert next_pass_seconds(False) == PASS_EVERY_SECONDS


def test_hive_retention_days_is_typed_and_ranged() -> None:
    assert Settings.from_env({}).retention_days == RETENTION_DAYS_DEFAULT == 30
    assert Settings.from_env({"HIVE_RETENTION_DAYS": "7"}).retention_days == 7
    for bad in ("0", "3651", "1.5", "30d", "３０", ""):
        with pytest.raises(SettingsError) as raised:
            Settings.from_env({"HIVE_RETENTION_DAYS": bad})
        [line] = raised.value.problems
        assert line.startswith("HIVE_RETENTION_DAYS") and "1 to 3650" in line, line
