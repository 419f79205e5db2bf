"""Issues and orders put in a chosen state of RULES 4 on the real database, for a person's
verbs to act on. Each state is written as the hive's writers leave it, and checked by
`hive.order_state` before a test runs."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import psycopg
import pytest

from hive.rules.outcome_codes import code_of
from hive.rules.states import (
    ACCEPT,
    EMPTY,
    ENDED,
    ESCALATE,
    NONE,
    REAPED,
    REFUSED,
    RELEASED,
    RUNNING,
    SENDBACK,
    STALE,
    WAIT,
)
from hive.store import people

# started, finished, outcome, review_state: one row of each state
ROWS: dict[int, tuple[bool, bool, str | None, str | None]] = {
    NONE: (False, False, None, None),
    RUNNING: (True, False, None, None),
    REFUSED: (True, True, "refused", None),
    ENDED: (True, True, "finished", None),
    WAIT: (True, True, "finished", "wait"),
    ACCEPT: (True, True, "finished", "accept"),
    SENDBACK: (True, True, "finished", "sendback"),
    ESCALATE: (True, True, "finished", "escalate"),
    EMPTY: (True, True, "finished", "empty"),
    STALE: (True, True, "finished", "stale"),
    REAPED: (True, True, "reaped: runner silent", None),
    RELEASED: (True, True, "handed back", None),
}
NOTE = "the reviewer's note"


@dataclass
class Made:
    issue: int
    conversation_id: uuid.UUID


@pytest.fixture
def db(hive_db_url: str) -> Iterator[psycopg.Connection[Any]]:
    """One autocommit connection, as a command has."""
    with psycopg.connect(hive_db_url, autocommit=True) as conn:
        yield conn


@pytest.fixture
def make_issue(db: psycopg.Connection[Any]) -> Callable[..., int]:
    def make(
        number: int,
        *,
        criteria: tuple[str, ...] = ("file `a.txt` contains `a`",),
        state: str = "open",
        blocked_by: tuple[int, ...] = (),
        boundary: tuple[str, ...] = ("a.txt",),
    ) -> int:
        db.execute(
            "INSERT INTO hive.queen_issue (number, title, body, boundary, criteria, state,"
            " blocked_by, closed_reason, closed_code, closed_at)"
            " VALUES (%s, %s, 'do it', %s, %s, %s, %s,"
            " CASE WHEN %s = 'closed' THEN 'closed by hand' END,"
            " CASE WHEN %s = 'closed' THEN 'by_hand'::hive.closed_code END,"
            " CASE WHEN %s = 'closed' THEN now() END)",
            (
                number,
                f"issue {number}",
                list(boundary),
                json.dumps(list(criteria)),
                state,
                list(blocked_by),
                state,
                state,
                state,
            ),
        )
        return number

    return make


@pytest.fixture
def make_order(db: psycopg.Connection[Any], make_issue: Callable[..., int]) -> Callable[..., Made]:
    """`make_order(n, STATE, ...)`: issue n (made unless `issue=False`) and its order in
    STATE, claimed by runner-1 when in flight (`runner=None`: the Queen's own bee)."""

    def make(
        number: int,
        state: int,
        *,
        issue: bool = True,
        sendbacks: int = 0,
        merged_sha: str | None = None,
        approved: bool = False,
        runner: str | None = "runner-1",
        queued: bool = True,
        failures_in_a_row: int = 0,
        issue_state: str = "open",
    ) -> Made:
        if issue:
            make_issue(number, state=issue_state)
        started, finished, outcome, review = ROWS[state]
        conversation = uuid.uuid4()
        db.execute(
            "INSERT INTO hive.queen_dispatch (issue, branch, base, started, conversation_id,"
            " owned_paths, queued_at, claimed_by, claimed_at, dispatched_at, finished_at,"
            " outcome, outcome_code, review_state, review_note, reviewed_at, sendbacks, merged_sha,"
            " merged_at, approved_at, approved_by, failures_in_a_row)"
            " VALUES (%(issue)s, %(branch)s, 'main', %(started)s, %(conversation)s,"
            " ARRAY['a.txt'], CASE WHEN %(queued)s THEN now() END, %(runner)s,"
            " CASE WHEN %(runner)s::text IS NOT NULL THEN now() END, now(),"
            " CASE WHEN %(finished)s THEN now() END, %(outcome)s,"
            " %(code)s::hive.outcome_code, %(review)s,"
            " CASE WHEN %(review)s::text IS NOT NULL THEN %(note)s END,"
            " CASE WHEN %(review)s::text IS NOT NULL THEN now() END, %(sendbacks)s,"
            " %(merged_sha)s, CASE WHEN %(merged_sha)s::text IS NOT NULL THEN now() END,"
            " CASE WHEN %(approved)s THEN now() END, CASE WHEN %(approved)s THEN 'ann' END,"
            " %(failures)s)",
            {
                "issue": number,
                "branch": f"queen-{number}",
                "started": started,
                "conversation": conversation,
                "queued": queued,
                "runner": runner if state == RUNNING else None,
                "finished": finished,
                "outcome": outcome,
                "code": code_of(outcome) if outcome else None,
                "review": review,
                "note": NOTE,
                "sendbacks": sendbacks,
                "merged_sha": merged_sha,
                "approved": approved,
                "failures": failures_in_a_row,
            },
        )
        made = people.facts(db, number)
        assert made is not None and made.order_state == state
        return Made(number, conversation)

    return make


def review_of(db: psycopg.Connection[Any], issue: int) -> dict[str, Any]:
    """The order's judged fields as they are now."""
    row = db.execute(
        "SELECT review_state, review_note, sendbacks, approved_at, approved_by, outcome,"
        " finished_at, detail,"
        " hive.order_state(started, finished_at, outcome_code, review_state) AS state"
        " FROM hive.queen_dispatch WHERE issue = %s",
        (issue,),
    ).fetchone()
    assert row is not None
    names = (
        "review_state",
        "review_note",
        "sendbacks",
        "approved_at",
        "approved_by",
        "outcome",
        "finished_at",
        "detail",
        "state",
    )
    return dict(zip(names, row, strict=True))
