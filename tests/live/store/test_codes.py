"""0013: an order's outcome code; 0014: an issue's closed code. Rows written before get
their code from their sentence, once; the store's enum holds the rule's codes; a writer
names both or neither."""

from __future__ import annotations

import uuid

import psycopg
import pytest

from hive.rules.issue_states import ClosedCode
from hive.rules.outcome_codes import OutcomeCode
from hive.store import migrate

pytestmark = pytest.mark.live

BEFORE = 12  # the last migration before the outcome code
CLOSED_BEFORE = 13  # the last before the closed code
SENTENCES = {
    "finished": "finished",
    "ended badly": "ended_badly",
    "ended unexpectedly": "ended_unexpectedly",
    "refused": "refused",
    "quota exhausted": "quota_exhausted",
    "handed back": "handed_back",
    "reaped at boot": "reaped_at_boot",
    "reaped: runner silent": "reaped_runner_silent",
    "reaped: no completion within 120 minutes": "reaped_no_completion",
    "reaped: no completion within 0.05 minutes": "reaped_no_completion",
    "cancelled": "cancelled",
    "something older": "other",
}


def _order(conn: psycopg.Connection, issue: int, outcome: str | None) -> None:
    conn.execute(
        "INSERT INTO hive.queen_dispatch (issue, branch, base, started, conversation_id,"
        " finished_at, outcome) VALUES (%s, %s, 'main', true, %s,"
        " CASE WHEN %s::text IS NULL THEN NULL ELSE now() END, %s)",
        (issue, f"queen-{issue}", uuid.uuid4(), outcome, outcome),
    )


def test_rows_written_before_get_their_code_from_their_sentence(
    hive_fresh_database, monkeypatch
) -> None:
    url = hive_fresh_database()
    every = migrate.migrations()
    monkeypatch.setattr(migrate, "migrations", lambda: [m for m in every if m.version <= BEFORE])
    assert migrate.apply(url)[-1] == BEFORE
    with psycopg.connect(url) as conn:
        for n, sentence in enumerate([None, *SENTENCES], start=1):
            _order(conn, n, sentence)
    monkeypatch.undo()
    assert BEFORE + 1 in migrate.apply(url)
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT outcome, outcome_code::text FROM hive.queen_dispatch ORDER BY issue"
        ).fetchall()
    assert rows == [(None, None), *SENTENCES.items()]


def test_the_store_s_enum_is_the_rule_s(hive_db_url: str) -> None:
    with psycopg.connect(hive_db_url) as conn:
        labels = conn.execute("SELECT unnest(enum_range(NULL::hive.outcome_code))::text").fetchall()
    assert [label for (label,) in labels] == [code.value for code in OutcomeCode]


def test_a_sentence_without_its_code_is_refused(hive_db_url: str) -> None:
    with psycopg.connect(hive_db_url) as conn, pytest.raises(psycopg.errors.CheckViolation):
        _order(conn, 9001, "finished")


CLOSED = {
    "merged as 0123abc": "merged",
    "closed by hand": "by_hand",
    "closed long ago": "other",
}


def test_issues_closed_before_get_their_closed_code_from_their_reason(
    hive_fresh_database, monkeypatch
) -> None:
    url = hive_fresh_database()
    every = migrate.migrations()
    before = CLOSED_BEFORE
    monkeypatch.setattr(migrate, "migrations", lambda: [m for m in every if m.version <= before])
    assert migrate.apply(url)[-1] == before
    with psycopg.connect(url) as conn:
        conn.execute("INSERT INTO hive.queen_issue (number, title) VALUES (1, 'open')")
        for n, reason in enumerate(CLOSED, start=2):
            conn.execute(
                "INSERT INTO hive.queen_issue (number, title, state, closed_reason, closed_at)"
                " VALUES (%s, 't', 'closed', %s, now())",
                (n, reason),
            )
    monkeypatch.undo()
    assert before + 1 in migrate.apply(url)
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT closed_reason, closed_code::text FROM hive.queen_issue ORDER BY number"
        ).fetchall()
    assert rows == [(None, None), *CLOSED.items()]


def test_the_store_s_closed_codes_are_the_rule_s(hive_db_url: str) -> None:
    with psycopg.connect(hive_db_url) as conn:
        labels = conn.execute("SELECT unnest(enum_range(NULL::hive.closed_code))::text").fetchall()
    assert [label for (label,) in labels] == [code.value for code in ClosedCode]


CHECK_BEFORE = 15  # the last before a check's `inherited`
TAILS = [
    ("fail", "also red on main: not this work's fault\nE501", True),
    ("fail", "tests failed\nalso red on main: not this work's fault", False),
    ("pass", "ok", False),
]


def test_checks_run_before_are_marked_inherited_from_their_output_s_head(
    hive_fresh_database, monkeypatch
) -> None:
    url = hive_fresh_database()
    every = migrate.migrations()
    monkeypatch.setattr(
        migrate, "migrations", lambda: [m for m in every if m.version <= CHECK_BEFORE]
    )
    assert migrate.apply(url)[-1] == CHECK_BEFORE
    with psycopg.connect(url) as conn:
        for result, tail, _ in TAILS:
            conn.execute(
                "INSERT INTO hive.queen_check (issue, attempt, name, result, output_tail)"
                " VALUES (1, 1, 'lint', %s, %s)",
                (result, tail),
            )
    monkeypatch.undo()
    assert CHECK_BEFORE + 1 in migrate.apply(url)
    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT inherited FROM hive.queen_check ORDER BY id").fetchall()
    assert [inherited for (inherited,) in rows] == [i for _, _, i in TAILS]
