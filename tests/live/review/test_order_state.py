"""hive.order_state (SQL) and hive.rules.lifecycle.state_of (Python) read a row alike."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime

import psycopg
import pytest

from hive.rules.lifecycle import ReviewState, state_of
from hive.rules.outcome_codes import OutcomeCode
from hive.store.sql import q

pytestmark = pytest.mark.live

CODES = [None, *OutcomeCode]
REVIEWS = [None, *[r.value for r in ReviewState], "bogus"]


def test_the_sql_twin_reads_every_row_as_the_rule_does(hive_db_url: str) -> None:
    at = datetime(2026, 1, 1, tzinfo=UTC)
    with psycopg.connect(hive_db_url) as conn:
        for started, finished, code, review in itertools.product(
            (False, True), (False, True), CODES, REVIEWS
        ):
            params = {
                "started": started,
                "finished_at": at if finished else None,
                "outcome_code": code,
                "review_state": review,
            }
            row = conn.execute(q("order_state_sql"), params).fetchone()
            assert row is not None
            assert row[0] == state_of(started, finished, code, review), params
