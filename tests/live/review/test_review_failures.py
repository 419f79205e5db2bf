"""No review strands an issue (DESIGN 11), on a real PostgreSQL, real git and real
processes: a review that gives no verdict waits a pause that doubles, and the third
failure in a row escalates the work with a sentence `hive why` shows."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import psycopg
import pytest

from hive.actors.reviewer.reviewer import SCRATCH_DIRNAME, Reviewer, ReviewerConfig
from hive.git.repo import Checkout
from hive.metrics import HiveMetrics
from hive.services import history
from hive.store import reviews
from tests.live.review.conftest import Finished

pytestmark = pytest.mark.live

CONTAINS = "file `docs/a.md` contains `{}`"
MISSING = "command:/nonexistent/hive-reviewer --judge"
WAIT_SECONDS = 20.0


def _row(url: str, issue: int) -> dict[str, Any]:
    with psycopg.connect(url) as conn:
        cur = conn.cursor(row_factory=psycopg.rows.dict_row)
        row = cur.execute(
            "SELECT review_state, review_note, review_failures, review_pause_seconds,"
            " review_visits FROM hive.queen_dispatch WHERE issue = %s",
            (issue,),
        ).fetchone()
        assert row is not None
        return row


def _pause_passed(url: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("UPDATE hive.queen_dispatch SET reviewed_at = now() - interval '1 hour'")


def _reviewer(db: Any, checkout: Checkout, **config: Any) -> tuple[Reviewer, HiveMetrics]:
    metrics = HiveMetrics()
    reviewer = Reviewer(db, checkout, metrics, lambda item: lambda: None, ReviewerConfig(**config))
    return reviewer, metrics


def _failures(metrics: HiveMetrics, reason: str) -> float:
    value = metrics.registry.get_sample_value("hive_review_failures_total", {"reason": reason})
    return 0.0 if value is None else value


def test_a_reviewer_that_cannot_start_waits_doubling_then_escalates_with_a_sentence(
    db: Any, queen_checkout: Checkout, finished_work: Callable[..., Finished], hive_db_url: str
) -> None:
    finished_work(1, {"docs/a.md": "x\n"}, [CONTAINS.format("x")])
    reviewer, metrics = _reviewer(db, queen_checkout, agent=MISSING)
    reviewer.review(reviews.due(db)[0])
    got = _row(hive_db_url, 1)
    assert (got["review_state"], got["review_failures"], got["review_pause_seconds"]) == (
        "wait",
        1,
        30,
    )
    assert got["review_note"] == (
        "the reviewer could not start (ended badly, exit 127, judged 0 of 1 criteria: "
        "/bin/sh: 1: /nonexistent/hive-reviewer: not found): tried again in 30 s "
        "(failure 1 of 3)"
    )
    assert reviews.due(db) == []  # not every tick: after its pause
    _pause_passed(hive_db_url)
    reviewer.review(reviews.due(db)[0])
    got = _row(hive_db_url, 1)
    assert (got["review_state"], got["review_failures"], got["review_pause_seconds"]) == (
        "wait",
        2,
        60,
    )
    _pause_passed(hive_db_url)
    reviewer.review(reviews.due(db)[0])
    got = _row(hive_db_url, 1)
    assert (got["review_state"], got["review_failures"]) == ("escalate", 3)
    assert "failed 3 times in a row, so a person decides" in got["review_note"]
    assert reviews.due(db) == []  # escalated: a person's now
    assert _failures(metrics, "start") == 3
    said = [s.text for s in history.why(db, 1)]
    assert said[0].startswith("attempt 1 escalated: a person decides: the reviewer could not")


def test_a_verdict_after_a_failure_counts_the_failures_from_zero_again(
    db: Any, queen_checkout: Checkout, finished_work: Callable[..., Finished], hive_db_url: str
) -> None:
    finished_work(2, {"docs/a.md": "x\n"}, [CONTAINS.format("x")])
    broken, _ = _reviewer(db, queen_checkout, agent="command:exit 3")
    broken.review(reviews.due(db)[0])
    assert _row(hive_db_url, 2)["review_failures"] == 1
    assert _row(hive_db_url, 2)["review_note"].startswith(
        "the reviewer did not finish (ended badly, exit 3, judged 0 of 1 criteria)"
    )
    _pause_passed(hive_db_url)
    demo, _ = _reviewer(db, queen_checkout)
    demo.review(reviews.due(db)[0])
    got = _row(hive_db_url, 2)
    assert (got["review_state"], got["review_failures"], got["review_pause_seconds"]) == (
        "accept",
        0,
        0,
    )


def test_a_reviewer_past_its_bound_is_a_timeout_and_the_pause_starts_where_configured(
    db: Any, queen_checkout: Checkout, finished_work: Callable[..., Finished], hive_db_url: str
) -> None:
    finished_work(3, {"docs/a.md": "x\n"}, [CONTAINS.format("x")])
    reviewer, metrics = _reviewer(
        db,
        queen_checkout,
        agent="command:exec sleep 30",
        bound_seconds=0.5,
        failure_pause_seconds=2,
    )
    reviewer.review(reviews.due(db)[0])
    got = _row(hive_db_url, 3)
    assert (got["review_state"], got["review_pause_seconds"]) == ("wait", 2)
    assert got["review_note"].startswith(
        "the reviewer passed its time bound (stopped, signal 15, past its bound"
        " (HIVE_REVIEW_MAX_SECONDS)"
    )
    assert _failures(metrics, "timeout") == 1


def test_a_review_that_breaks_before_its_reviewer_runs_is_a_failure_too(
    db: Any, queen_checkout: Checkout, finished_work: Callable[..., Finished], hive_db_url: str
) -> None:
    finished_work(4, {"docs/a.md": "x\n"}, [CONTAINS.format("x")])
    # a file where the scratch trees go: the review cannot write its tree
    (queen_checkout.workdir / SCRATCH_DIRNAME).write_text("in the way\n")
    reviewer, metrics = _reviewer(db, queen_checkout, failures_max=1)
    reviewer.review(reviews.due(db)[0])
    got = _row(hive_db_url, 4)
    assert got["review_state"] == "escalate"
    assert got["review_note"].startswith("the review could not run (")
    assert _failures(metrics, "error") == 1


def test_a_pass_writes_the_failure_of_a_reviewer_that_is_no_agent(
    db: Any, queen_checkout: Checkout, finished_work: Callable[..., Finished], hive_db_url: str
) -> None:
    finished_work(5, {"docs/a.md": "x\n"}, [CONTAINS.format("x")])
    reviewer, metrics = _reviewer(db, queen_checkout, agent="gemini")
    assert reviewer.run_once().started == (5,)
    deadline = time.monotonic() + WAIT_SECONDS
    while _row(hive_db_url, 5)["review_state"] is None:
        assert time.monotonic() < deadline, "the failed review wrote nothing"
        time.sleep(0.05)
    got = _row(hive_db_url, 5)
    assert got["review_state"] == "wait"
    assert got["review_note"].startswith(
        "the reviewer could not start (HIVE_REVIEWER_AGENT='gemini' is not an agent"
    )
    assert _failures(metrics, "start") == 1
    while reviewer.in_review():
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert reviewer.run_once().started == ()  # paused: not tried again every tick
