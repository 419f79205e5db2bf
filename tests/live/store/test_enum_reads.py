"""Every read of a column whose values are a Python enum hands on the member, not the
column's text: a StrEnum's member equals its text, so `==` hides a missed conversion and
`is` (the house's comparison of members) silently fails on it. Each test asserts by
identity, so a read that forgets to convert fails here."""

from __future__ import annotations

import json

from hive.chaos import evidence
from hive.rules.issue_states import IssueState
from hive.rules.jobs import JobKind, JobState, Step
from hive.rules.lifecycle import ReviewState
from hive.rules.modes import CheckResult
from hive.rules.outcome_codes import OutcomeCode
from hive.rules.states import Outcome, State
from hive.rules.waits import WaitState
from hive.store import board, endings, forge, issues, jobs, orders, people, publish, waits
from hive.store.endings import OrderEnding
from hive.store.issues import NewIssue

from .conftest import queue


def _ended_then_queued_again(conn, issue: int) -> None:
    queue(conn, issue)
    claimed = orders.claim(conn, "r1")
    assert claimed is not None
    endings.end(conn, OrderEnding(claimed.fence, Outcome.ENDED_BADLY))
    queue(conn, issue)


def test_an_archived_attempt_s_code_reads_from_its_json_snapshot_as_the_member(conn):
    _ended_then_queued_again(conn, 1)
    [archived] = orders.history(conn, 1)
    assert archived.snapshot["outcome_code"] == "ended_badly"  # JSON: text
    assert archived.outcome_code is OutcomeCode.ENDED_BADLY


def test_a_snapshot_archived_before_the_code_existed_reads_as_other_or_not_ended(conn):
    for snapshot in ({"outcome": "finished"}, {"outcome": None}):
        conn.execute(
            "INSERT INTO hive.queen_dispatch_history (issue, snapshot) VALUES (2, %s::jsonb)",
            (json.dumps(snapshot),),
        )
    assert [a.outcome_code for a in orders.history(conn, 2)] == [OutcomeCode.OTHER, None]


def test_the_chaos_run_reads_each_attempt_s_code_as_the_member(conn):
    _ended_then_queued_again(conn, 3)
    claimed = orders.claim(conn, "r1")
    assert claimed is not None
    endings.end(conn, OrderEnding(claimed.fence, Outcome.FINISHED))
    [codes] = evidence.attempts(conn, [3]).values()
    assert codes[0] is OutcomeCode.ENDED_BADLY and codes[1] is OutcomeCode.FINISHED
    by_conversation = evidence.conversations(conn, [3])
    assert sorted(by_conversation.values()) == ["ended_badly", "finished"]
    assert all(type(code) is OutcomeCode for code in by_conversation.values())
    assert evidence.finished_issues(evidence.attempts(conn, [3])) == [3]


def _accepted(conn) -> int:
    """An open issue whose order finished and was accepted, as the reviewer leaves it."""
    n = issues.create(conn, NewIssue("enum reads")).number
    queue(conn, n)
    claimed = orders.claim(conn, "r1")
    assert claimed is not None
    endings.end(conn, OrderEnding(claimed.fence, Outcome.FINISHED))
    conn.execute(
        "UPDATE hive.queen_dispatch SET review_state = 'accept', reviewed_at = now()"
        " WHERE issue = %s",
        (n,),
    )
    return n


def test_an_order_s_review_state_reads_as_the_member(conn):
    order = orders.get(conn, _accepted(conn))
    assert order is not None and order.review_state is ReviewState.ACCEPT
    assert order.outcome_code is OutcomeCode.FINISHED


def test_a_card_s_issue_state_review_state_and_order_state_read_as_members(conn):
    [card] = board.cards(conn, [_accepted(conn)])
    assert card.issue_state is IssueState.OPEN
    assert card.review_state is ReviewState.ACCEPT
    assert card.order_state is State.ACCEPT


def test_a_person_s_facts_and_an_issue_s_jobs_read_as_members(conn):
    n = _accepted(conn)
    facts = people.facts(conn, n)
    assert facts is not None and facts.issue_state is IssueState.OPEN
    assert facts.review_state is ReviewState.ACCEPT and facts.order_state is State.ACCEPT
    jobs.create(conn, JobKind.PUBLISH, n, Step.CHECKS)
    [job] = people.jobs_of(conn, n)
    assert job.state is JobState.READY


def test_the_publish_job_s_facts_and_checks_read_as_members(db, conn):
    n = _accepted(conn)
    found = publish.facts(db, n)
    assert found is not None
    assert found.state is State.ACCEPT and found.issue_state is IssueState.OPEN
    made = jobs.create(conn, JobKind.PUBLISH, n, Step.CHECKS).job
    publish.record_check(
        db, issue=n, attempt=found.attempt, job=made.id, merge_sha="c" * 40, name="lint",
        result=CheckResult.FAIL, exit_code=1, seconds=0.1, output_tail="E501",
    )  # fmt: skip
    [check] = publish.checks_on(db, n, found.attempt, "c" * 40)
    assert check.result is CheckResult.FAIL


def test_the_night_watch_s_order_state_reads_as_the_member(conn):
    n = _accepted(conn)
    conn.execute("UPDATE hive.queen_issue SET origin = 'github' WHERE number = %s", (n,))
    [fact] = [f for f in forge.watch_facts(conn) if f.issue == n]
    assert fact.order_state is State.ACCEPT


def test_a_wait_s_state_reads_as_the_member(conn):
    made = waits.add(conn, "job:1", key="enum-reads")
    assert made.state is WaitState.WAITING
    [moved] = waits.resolve(conn, "enum-reads")
    assert moved.wait.state is WaitState.RESOLVED


def test_a_review_state_no_writer_makes_reads_as_its_text_and_the_order_as_illegal(conn):
    # review_state is text with no CHECK: a row the hive did not write still reads, and
    # hive.order_state calls it ILLEGAL (the Queen's round and `hive why` go on)
    n = _accepted(conn)
    conn.execute("UPDATE hive.queen_dispatch SET review_state = 'bogus' WHERE issue = %s", (n,))
    order = orders.get(conn, n)
    assert order is not None and order.review_state == "bogus"
    assert type(order.review_state) is str
    facts = people.facts(conn, n)
    assert facts is not None and facts.review_state == "bogus"
    assert facts.order_state is State.ILLEGAL
    [card] = board.cards(conn, [n])
    assert card.review_state == "bogus" and card.order_state is State.ILLEGAL
