"""Every read of a column whose values are a Python enum hands on the member, not the
column's text: a StrEnum's member equals its text, so `==` hides a missed conversion and
`is` (the house's comparison of members) silently fails on it. Each test asserts by
identity, so a read that forgets to convert fails here."""

from __future__ import annotations

import json

from hive.chaos import evidence
from hive.rules.outcome_codes import OutcomeCode
from hive.rules.states import Outcome
from hive.store import endings, orders
from hive.store.endings import OrderEnding

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
