"""`hive bench publish`'s figures from one issue's parts: the hive's own time is what is
left beside the turn, the checks and the reviewer's process; the ratio is review and
publish beside the turn."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from hive.bench.publish import Processes, Spent, Times, percentile, report, times_of
from hive.errors import HiveError


def _times(attempt: int = 1, **parts: float) -> Times:
    base = {
        "issue_to_merged": 3.0,
        "pickup": 0.2,
        "start": 0.3,
        "turn": 1.0,
        "ending": 0.1,
        "review": 0.7,
        "publish": 0.8,
        "publish_checks": 0.4,
        "publish_push": 0.3,
        "publish_close": 0.1,
        "checks": 0.25,
    }
    return Times(attempt=attempt, checks_run=1, **{**base, **parts})


ARGS = argparse.Namespace(issues=3, in_flight=2, tick=1.0)
ALONE = Processes(agent=0.6, reviewer=0.5, check=0.05)
SPENT = Spent(queen_cpu=1.5, runners_cpu=0.75, load_start=3.0, load_end=4.0)


def test_hive_own_is_the_issue_time_less_turn_checks_and_the_reviewers_median() -> None:
    result = report(
        ARGS, [_times(), _times(issue_to_merged=4.0), _times(issue_to_merged=5.0)], ALONE, SPENT
    )
    # 3.0 - 1.0 - 0.25 - 0.5, and the same for 4.0 and 5.0
    assert result["hive_own_p50_s"] == pytest.approx(2.25)
    assert result["hive_own_p90_s"] == pytest.approx(3.25)
    assert result["hive_own_p99_s"] == pytest.approx(3.25)
    assert result["hive_own_ratio"] == pytest.approx(2.25 / 0.5)
    assert result["reviewer_process_p50_s"] == 0.5
    assert result["agent_process_p50_s"] == 0.6
    assert result["check_process_p50_s"] == 0.05


def test_overhead_ratio_is_review_and_publish_beside_the_turn_at_medians() -> None:
    result = report(
        ARGS, [_times(turn=1.0), _times(turn=2.0, review=1.7), _times(turn=3.0)], ALONE, SPENT
    )
    assert result["review_and_publish_p50_s"] == pytest.approx(1.5)
    assert result["turn_p50_s"] == pytest.approx(2.0)
    assert result["overhead_ratio"] == pytest.approx(0.75)


def test_the_report_counts_merged_issues_and_send_backs() -> None:
    result = report(ARGS, [_times(), _times(attempt=2)], ALONE, SPENT)
    assert (result["merged"], result["sent_back"], result["checks_run"]) == (2, 1, 2)


def test_the_cpu_the_hives_processes_spent_is_given_per_merged_issue() -> None:
    result = report(ARGS, [_times(), _times(), _times()], ALONE, SPENT)
    assert result["queen_cpu_per_issue_s"] == pytest.approx(0.5)
    assert result["runners_cpu_per_issue_s"] == pytest.approx(0.25)
    assert (result["load_start"], result["load_end"]) == (3.0, 4.0)


def test_percentile_is_the_nearest_rank() -> None:
    values = [float(v) for v in range(1, 11)]
    assert percentile(values, 90) == 9.0
    assert percentile(values, 50) == 5.0
    assert percentile([7.0], 90) == 7.0
    assert percentile([2.0, 1.0], 90) == 2.0
    assert percentile([5.0, 4.0, 3.0, 2.0, 1.0], 90) == 5.0  # rank 4.5 rounds up


MOMENTS = {
    "created_at": 0.0,
    "queued_at": 0.5,
    "dispatched_at": 0.75,
    "turn_last_line_at": 1.5,
    "finished_at": 1.625,
    "reviewed_at": 2.25,
    "checked_at": 2.5,
    "pushed_at": 3.0,
    "merged_at": 3.125,
}


def _row(**moments: float | None) -> dict[str, Any]:
    at = datetime(2026, 1, 1, tzinfo=UTC)
    row: dict[str, Any] = {"issue": 7, "attempt": 2, "checks": 1, "check_seconds": 0.0625}
    for name, value in {**MOMENTS, **moments}.items():
        row[name] = None if value is None else at + timedelta(seconds=value)
    return row


def test_an_issues_parts_are_the_spans_between_its_rows_moments() -> None:
    t = times_of(_row())
    assert (t.issue_to_merged, t.pickup, t.start, t.turn, t.ending) == (
        3.125,
        0.5,
        0.25,
        0.875,
        0.125,
    )
    assert (t.review, t.publish) == (0.625, 0.875)
    assert (t.publish_checks, t.publish_push, t.publish_close) == (0.25, 0.5, 0.125)
    assert (t.attempt, t.checks_run, t.checks) == (2, 1, 0.0625)


def test_an_issue_merged_without_one_of_its_moments_fails_the_bench() -> None:
    with pytest.raises(HiveError, match=r"issue 7 merged with no reviewed_at$"):
        times_of(_row(reviewed_at=None))
