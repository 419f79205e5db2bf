"""Every turn's cost counts on the UTC day it was spent, once (lesson module 7), on a real
PostgreSQL: a bee's turn when its attempt ended, a review turn and a shaping turn when
they ran (their own rows in hive.turn_spend), a chat turn when it ended; an issue's
spend sums them all."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from hive.actors.bee.ending import Accounting, end_and_sell
from hive.actors.reviewer.inputs import settle
from hive.agents.base import Ending, TurnOutcome
from hive.agents.protocol import Usage
from hive.metrics import HiveMetrics
from hive.rules.spend import day_start
from hive.store import orders, spend
from hive.store.db import connection
from tests.live.store.test_credits import claimed_order, finished, review_row

pytestmark = pytest.mark.live

DAY = timedelta(days=1)


def _yesterday(db: Any, issue: int) -> None:
    """The attempt of `issue` ended at 12:00 UTC yesterday."""
    noon = day_start(datetime.now(UTC)) - DAY / 2
    with connection(db) as conn:
        sql = "UPDATE hive.queen_dispatch SET finished_at = %s WHERE issue = %s"
        conn.execute(sql, (noon, issue))


def _review(db: Any, issue: int, usd: float | None, tokens: tuple[int, int] = (10, 20)) -> None:
    order = orders.get(db, issue)
    assert order is not None
    usage = Usage("anthropic", "claude-sonnet-4-5", *tokens, cost_usd=usd)
    ending = Ending(TurnOutcome.FINISHED, 1.0, usage=usage)
    settle(db, review_row(issue, order.conversation_id), ending, HiveMetrics(), Accounting())


def _chat_turn(db: Any, issue: int, usd: float) -> None:
    with connection(db) as conn:
        conn.execute(
            "INSERT INTO hive.chat_outbox (cause, bot, kind, issue, body, turn_key_index,"
            " turn_input_tokens, turn_output_tokens, turn_cost_usd, turn_ended_at)"
            " VALUES (%s, 'bee', 1, %s, 'an answer', 0, 1, 2, %s, now())",
            (f"answer:bee:{issue}", issue, usd),
        )


def test_a_review_today_of_work_that_ended_yesterday_counts_today(db: Any) -> None:
    with connection(db) as conn:
        got = claimed_order(conn, 1, None)
    end_and_sell(db, finished(got.fence, 0.5))
    _yesterday(db, 1)
    _review(db, 1, 0.25)
    today = day_start(datetime.now(UTC))
    assert spend.since(db, today) == 0.25  # the review, not the bee's turn
    (key,) = spend.by_key_since(db, today)
    assert (key.key_index, key.attempts, key.input_tokens, key.output_tokens) == (0, 1, 10, 20)
    assert spend.since(db, today - DAY) == 0.75
    order = orders.get(db, 1)
    assert order is not None and order.cost_usd == 0.5  # the attempt's row: its bee's turn


def test_each_turn_counts_once_the_bee_its_reviews_and_a_chat_turn(db: Any) -> None:
    with connection(db) as conn:
        got = claimed_order(conn, 1, None)
    end_and_sell(db, finished(got.fence, 1.0))
    _review(db, 1, 0.25)
    _review(db, 1, 0.125)
    _review(db, 1, None, (7, 0))  # no figure, a model the table does not price: unpriced
    _chat_turn(db, 1, 0.0625)
    today = day_start(datetime.now(UTC))
    (key,) = spend.by_key_since(db, today)
    assert (key.attempts, key.unpriced, key.cost_usd) == (5, 1, 1.4375)
    assert (key.input_tokens, key.output_tokens) == (0 + 10 + 10 + 7 + 1, 20 + 20 + 0 + 2)
    issue = spend.of_issue(db, 1)
    assert (issue.attempts, issue.unpriced, issue.cost_usd) == (5, 1, 1.4375)
    assert spend.of_issue(db, 2).attempts == 0
    assert spend.since(db, today + DAY) == 0.0  # nothing was spent tomorrow


def test_a_review_turn_that_reported_no_usage_counts_as_an_unpriced_turn(db: Any) -> None:
    # every turn is accounted for: one the agent gave no usage for is a row with no
    # tokens and an unknown cost, so the day's spend says its sum is a floor
    with connection(db) as conn:
        got = claimed_order(conn, 1, None)
    end_and_sell(db, finished(got.fence, 0.5))
    row = review_row(1, got.conversation_id)
    settle(db, row, Ending(TurnOutcome.FINISHED, 1.0), HiveMetrics(), Accounting())
    today = day_start(datetime.now(UTC))
    (key,) = spend.by_key_since(db, today)
    assert (key.attempts, key.unpriced, key.cost_usd) == (2, 1, 0.5)
    assert (key.input_tokens, key.output_tokens) == (0, 0)
    issue = spend.of_issue(db, 1)
    assert (issue.attempts, issue.unpriced) == (2, 1)
