"""The reviewer on a real PostgreSQL and real git: verdicts from the demo reviewer's
lines, written only where the state table allows, the row never reviewed twice at once."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
import pytest

from hive.actors.reviewer.reviewer import SCRATCH_DIRNAME, Reviewer, ReviewerConfig, ReviewItem
from hive.git.repo import Checkout
from hive.metrics import HiveMetrics
from hive.store import reviews
from tests.live.review.conftest import Finished

pytestmark = pytest.mark.live

CONTAINS = "file `docs/a.md` contains `{}`"


def _row(hive_db_url: str, issue: int) -> dict[str, Any]:
    with psycopg.connect(hive_db_url) as conn:
        cur = conn.cursor(row_factory=psycopg.rows.dict_row)
        row = cur.execute(
            "SELECT review_state, review_note, sendbacks, review_visits, review_pause_seconds,"
            " review_failures,"
            " reviewed_at FROM hive.queen_dispatch WHERE issue = %s",
            (issue,),
        ).fetchone()
        assert row is not None
        return row


def _reviewer(db: Any, checkout: Checkout, **config: Any) -> tuple[Reviewer, HiveMetrics, list]:
    metrics = HiveMetrics()
    registered: list[Any] = []

    def register(item: Any) -> Callable[[], None]:
        registered.append(item)
        return lambda: None

    return Reviewer(db, checkout, metrics, register, ReviewerConfig(**config)), metrics, registered


def _sample(metrics: HiveMetrics, name: str, **labels: str) -> float:
    value = metrics.registry.get_sample_value(name, labels)
    return 0.0 if value is None else value


def test_met_criteria_accept_the_work_imported_from_its_bundle(
    db: Any, queen_checkout: Checkout, finished_work: Callable[..., Finished], hive_db_url: str
) -> None:
    work = finished_work(1, {"docs/a.md": "hello world\n"}, [CONTAINS.format("hello")])
    reviewer, metrics, _ = _reviewer(db, queen_checkout)
    (row,) = reviews.due(db)
    decision = reviewer.review(row)
    assert decision is not None
    got = _row(hive_db_url, 1)
    assert (got["review_state"], got["review_note"]) == ("accept", "all 1 criteria met")
    assert work.head_sha is not None
    assert queen_checkout.repo.refs[b"refs/heads/queen-1"] == work.head_sha.encode()
    assert _sample(metrics, "hive_reviews_total", verdict="accept") == 1
    assert reviews.due(db) == []  # judged: not due again


def test_an_unmet_criterion_sends_back_with_its_reason_and_counts_the_send_back(
    db: Any, queen_checkout: Checkout, finished_work: Callable[..., Finished], hive_db_url: str
) -> None:
    finished_work(2, {"docs/a.md": "hello\n"}, [CONTAINS.format("hello"), CONTAINS.format("bye")])
    reviewer, metrics, _ = _reviewer(db, queen_checkout)
    reviewer.review(reviews.due(db)[0])
    got = _row(hive_db_url, 2)
    assert got["review_state"] == "sendback"
    assert (
        got["review_note"] == "- file `docs/a.md` contains `bye`: docs/a.md does not contain `bye`"
    )
    assert got["sendbacks"] == 1
    assert _sample(metrics, "hive_reviews_total", verdict="sendback") == 1


def test_after_two_send_backs_an_unmet_criterion_escalates(
    db: Any, queen_checkout: Checkout, finished_work: Callable[..., Finished], hive_db_url: str
) -> None:
    finished_work(3, {"docs/a.md": "x\n"}, [CONTAINS.format("y")], sendbacks=2)
    reviewer, _, _ = _reviewer(db, queen_checkout)
    reviewer.review(reviews.due(db)[0])
    assert _row(hive_db_url, 3)["review_state"] == "escalate"


def test_no_commit_beyond_base_is_empty_without_a_review(
    db: Any, queen_checkout: Checkout, finished_work: Callable[..., Finished], hive_db_url: str
) -> None:
    finished_work(4, {}, [CONTAINS.format("y")])
    reviewer, metrics, _ = _reviewer(db, queen_checkout, agent="command:exit 7")
    reviewer.review(reviews.due(db)[0])
    assert _row(hive_db_url, 4)["review_state"] == "empty"
    assert _sample(metrics, "hive_reviews_total", verdict="empty") == 1


def test_a_criterion_the_reviewer_cannot_judge_waits_and_its_pause_doubles(
    db: Any, queen_checkout: Checkout, finished_work: Callable[..., Finished], hive_db_url: str
) -> None:
    finished_work(5, {"docs/a.md": "x\n"}, [CONTAINS.format("x"), "the code is elegant"])
    reviewer, _, _ = _reviewer(db, queen_checkout)
    reviewer.review(reviews.due(db)[0])
    got = _row(hive_db_url, 5)
    assert (got["review_state"], got["review_pause_seconds"]) == ("wait", 30)
    assert reviews.due(db) == []  # paused for 30 s
    with psycopg.connect(hive_db_url, autocommit=True) as conn:
        conn.execute("UPDATE hive.queen_dispatch SET reviewed_at = now() - interval '31 s'")
    reviewer.review(reviews.due(db)[0])
    assert _row(hive_db_url, 5)["review_pause_seconds"] == 60
    assert _row(hive_db_url, 5)["review_visits"] == 2


def test_a_reviewer_that_fails_answers_wait_not_a_verdict_on_the_work(
    db: Any, queen_checkout: Checkout, finished_work: Callable[..., Finished], hive_db_url: str
) -> None:
    finished_work(6, {"docs/a.md": "x\n"}, [CONTAINS.format("x")])
    reviewer, _, _ = _reviewer(
        db, queen_checkout, agent="command:echo 'HIVE-CRITERION: 1 met'; exit 3"
    )
    reviewer.review(reviews.due(db)[0])
    got = _row(hive_db_url, 6)
    assert got["review_state"] == "wait"
    assert got["review_note"].startswith("the reviewer did not finish (ended badly, exit 3")
    assert got["review_failures"] == 1


def test_a_verdict_on_work_already_judged_is_refused_and_counted(
    db: Any, queen_checkout: Checkout, finished_work: Callable[..., Finished], hive_db_url: str
) -> None:
    finished_work(7, {"docs/a.md": "x\n"}, [CONTAINS.format("x")])
    reviewer, metrics, _ = _reviewer(db, queen_checkout)
    row = reviews.due(db)[0]
    reviewer.review(row)
    assert _row(hive_db_url, 7)["review_state"] == "accept"
    reviewer.review(row)  # the same row again: ACCEPT does not take a verdict
    assert _row(hive_db_url, 7)["review_visits"] == 1
    assert _sample(metrics, "hive_illegal_transitions_total") == 1
    assert _sample(metrics, "hive_reviews_total", verdict="accept") == 1


def test_a_pass_starts_each_due_row_once_and_a_stopped_review_writes_nothing(
    db: Any, queen_checkout: Checkout, finished_work: Callable[..., Finished], hive_db_url: str
) -> None:
    finished_work(8, {"docs/a.md": "x\n"}, [CONTAINS.format("x")])
    reviewer, _, registered = _reviewer(
        db, queen_checkout, agent="command:exec sleep 60", key_lanes=4
    )
    assert reviewer.run_once().started == (8,)
    assert reviewer.run_once().started == ()  # in review: never twice at once
    (item,) = registered
    assert isinstance(item, ReviewItem) and item.kind == 1
    started = threading.Event()
    while item.turn is None or item.turn.turn is None:  # the turn exists once started
        started.wait(0.01)
    item.stop()
    assert item.done.wait(10)
    assert _row(hive_db_url, 8)["reviewed_at"] is None  # reviewed again later
    assert [r.issue for r in reviews.due(db)] == [8]


def test_a_standby_queen_reviews_nothing(
    db: Any, queen_checkout: Checkout, finished_work: Callable[..., Finished], hive_db_url: str
) -> None:
    from hive.store import leases

    finished_work(9, {"docs/a.md": "x\n"}, [CONTAINS.format("x")])
    reviewer, _, _ = _reviewer(db, queen_checkout, holder="me", key_lanes=4)
    assert leases.claim(db, leases.QUEEN_LEASE, "the-other-queen", 60) is not None
    assert reviewer.run_once().started == ()
    with psycopg.connect(hive_db_url, autocommit=True) as conn:
        conn.execute("UPDATE hive.queen_lease SET holder = 'me'")
    assert reviewer.run_once().started == (9,)


def test_each_review_runs_in_its_heads_tree_whatever_the_last_reviewer_left(
    db: Any,
    queen_checkout: Checkout,
    finished_work: Callable[..., Finished],
    tmp_path: Path,
) -> None:
    seen = tmp_path / "seen"
    seen.mkdir()
    script = tmp_path / "reviewer.sh"
    script.write_text(
        f"find . -mindepth 1 | sort > {seen}/$HIVE_ISSUE\n"
        f"cat docs/a.md >> {seen}/$HIVE_ISSUE\n"
        "echo left > leftover.txt; echo tampered > docs/a.md\n"
    )
    reviewer, _, _ = _reviewer(db, queen_checkout, agent=f"command:sh {script}")
    finished_work(5, {"docs/a.md": "five\n"}, [CONTAINS.format("five")])
    reviewer.review(reviews.due(db)[0])
    finished_work(6, {"docs/a.md": "six\n"}, [CONTAINS.format("six")])
    reviewer.review(reviews.due(db)[0])
    assert (seen / "5").read_text().endswith("five\n")
    assert "leftover" not in (seen / "6").read_text()
    assert (seen / "6").read_text().endswith("six\n")
    # one tree, kept: the second review's was the first's, brought to its head
    assert [p.name for p in (queen_checkout.workdir / SCRATCH_DIRNAME).iterdir()] == ["kept-0"]
