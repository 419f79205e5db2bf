"""Spend on the row (lesson module 7): an ending carries its tokens and its cost (the
agent's own figure, else the price table's, else unknown), the metric counts it by key,
the day's spend sums every attempt that ended in the UTC day, and a day past
HIVE_SPEND_CAP_USD stops new orders with one sentence while a running bee finishes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import psycopg
from prometheus_client import generate_latest

from hive import configs
from hive.actors.queen.config import QueenConfig
from hive.actors.queen.queen import Queen
from hive.rules.spend import capped_sentence, day_start
from hive.rules.states import Outcome
from hive.runtime import queen_ports
from hive.store import endings, orders, reports, spend
from hive.store.orders import Fence
from hive.swarm import wait_for
from hive.testing import wait_for_ending
from tests.live.runtime.conftest import AGENT, add_issue, queue
from tests.live.runtime.test_runner import claimer_of

METRIC_SECONDS = 10.0


def run_one(rt, issue: int) -> orders.Order:
    queue(rt, issue)
    assert claimer_of(rt).run_once().started == (issue,)
    return wait_for_ending(rt.db, issue)


def spent_metric(rt, key: str) -> float:
    for line in generate_latest(rt.metrics.registry).decode().splitlines():
        if line.startswith(f'hive_spend_usd_total{{key_index="{key}"}}'):
            return float(line.split()[-1])
    return 0.0


def test_the_agents_own_cost_goes_on_the_row_and_into_the_metric(make_runtime):
    rt = make_runtime(AGENT=AGENT + "reports_cost")
    order = run_one(rt, 1)
    assert (order.outcome, order.cost_usd, order.cost_source) == ("finished", 0.75, "agent")
    assert (order.input_tokens, order.output_tokens) == (1000, 2000)
    # the metric counts once the ending's transaction landed, a moment after the row
    # reads ended: wait for it (a loaded machine shows the row first)
    wait_for(lambda: spent_metric(rt, "0") == 0.75 or None, METRIC_SECONDS, "the spend metric")


def test_without_a_figure_the_tokens_are_priced_by_the_table(make_runtime):
    rt = make_runtime(AGENT=AGENT + "reports_priced_tokens")
    order = run_one(rt, 1)
    # claude-sonnet-4-5: $3 per million input tokens, $15 per million output tokens
    assert order.cost_source == "prices"
    assert order.cost_usd is not None and abs(order.cost_usd - (3.0 + 1.5)) < 1e-9
    assert order.model == "claude-sonnet-4-5-20250929"


def test_a_turn_with_no_usage_and_no_price_has_an_unknown_cost(make_runtime):
    rt = make_runtime(AGENT=AGENT + "finish", WORKER_PROVIDER="acme")
    order = run_one(rt, 1)
    assert (order.cost_usd, order.cost_source) == (None, None)
    assert spent_metric(rt, "0") == 0.0


def test_tokens_reported_without_names_are_priced_as_the_worker_model(make_runtime):
    rt = make_runtime(
        AGENT=AGENT + "reports_bare_tokens", WORKER_PROVIDER="openai", WORKER_MODEL="gpt-5"
    )
    order = run_one(rt, 1)  # gpt-5: $1.25 per million input tokens
    assert (order.cost_usd, order.cost_source) == (1.25, "prices")


def test_names_the_agent_reported_win_over_the_worker_model_for_the_price(make_runtime):
    rt = make_runtime(AGENT=AGENT + "reports_usage", WORKER_PROVIDER="openai", WORKER_MODEL="gpt-5")
    # reports_usage names anthropic/claude-reported: the table has no such model
    assert run_one(rt, 1).cost_usd is None


def _end(db, issue: int, cost: float | None) -> None:
    from hive.rules.spend import Cost, CostSource

    order = orders.get(db, issue)
    assert order is not None
    ending = endings.OrderEnding(
        Fence(issue, order.conversation_id, order.claimed_by),
        Outcome.ENDED_BADLY,
        cost=None if cost is None else Cost(cost, CostSource.AGENT),
    )
    assert endings.end(db, ending)


def _queen(rt, cap: float) -> Queen:
    config = configs.queen_config(rt.settings)
    return Queen(
        queen_ports(rt), QueenConfig(**{**config.__dict__, "spend_cap_usd": cap}), lambda: None
    )


def test_the_days_spend_counts_archived_attempts_and_not_yesterdays(make_runtime):
    rt = make_runtime(QUEEN_BEES_RUN_ELSEWHERE="on")
    queue(rt, 1)
    _end(rt.db, 1, 0.5)
    queue(rt, 1)  # the next attempt archives the first one...
    assert orders.get(rt.db, 1).cost_usd is None  # type: ignore[union-attr]  # ...and its cost
    _end(rt.db, 1, 0.25)
    queue(rt, 2)
    _end(rt.db, 2, None)  # unknown: counted as unpriced, adds nothing
    queue(rt, 3)
    _end(rt.db, 3, 4.0)
    with psycopg.connect(rt.url, autocommit=True) as conn:  # #3 ended yesterday
        conn.execute(
            "UPDATE hive.queen_dispatch SET finished_at = now() - interval '1 day' - "
            "(now() - date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC')"
            " WHERE issue = 3"
        )
    today = day_start(datetime.now(UTC))
    assert spend.since(rt.db, today) == 0.75
    (key,) = spend.by_key_since(rt.db, today)
    assert (key.key_index, key.attempts, key.unpriced) == (0, 3, 1)
    assert spend.since(rt.db, today - timedelta(days=1)) == 4.75
    assert spend.of_issue(rt.db, 1).attempts == 2 and spend.of_issue(rt.db, 1).cost_usd == 0.75


def test_a_day_past_the_cap_stops_new_orders_and_a_running_bee_finishes(make_runtime):
    rt = make_runtime(QUEEN_BEES_RUN_ELSEWHERE="on")
    queue(rt, 1)
    _end(rt.db, 1, 2.0)
    queue(rt, 2)  # in flight when the cap is met: it runs on
    add_issue(rt.db, 3, boundary=("docs/notes.md",))
    result = _queen(rt, cap=2.0).run_once()
    assert result.dispatched == () and result.needs_you
    assert result.refusals == (capped_sentence(2.0, 2.0),)
    (report,) = reports.latest(rt.db, limit=1)
    assert report.headline == capped_sentence(2.0, 2.0) and report.needs_you
    assert orders.get(rt.db, 3) is None
    running = orders.get(rt.db, 2)
    assert running is not None and running.finished_at is None
    _end(rt.db, 2, 0.5)  # the bee that was running ends and is counted
    assert orders.get(rt.db, 2).outcome == "ended badly"  # type: ignore[union-attr]
    # a higher cap lets the round go on
    assert len(_queen(rt, cap=10.0).run_once().dispatched) == 1
