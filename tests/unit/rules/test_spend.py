"""Spend (lesson module 7) as vectors: a turn's cost, the price table's lookup, the UTC
day, and the cap that stops new orders in a round's plan."""

from datetime import UTC, datetime, timedelta, timezone

import pytest

from hive.rules.priority import Candidate
from hive.rules.round import Limits, Planned, RoundFacts, SpendCapped, plan_round, render
from hive.rules.spend import (
    Cost,
    CostSource,
    Price,
    capped_sentence,
    cost_of,
    day_start,
    next_day_start,
    price_of,
    spend_stops,
)

SONNET = Price(3.0, 15.0)
TABLE = {
    "anthropic": {"claude-sonnet-4": Price(3.0, 15.0), "claude-sonnet-4-5": Price(4.0, 16.0)},
    "demo": {"*": Price(0.0, 0.0)},
}


def test_the_agents_own_figure_wins_over_the_price_table() -> None:
    assert cost_of(0.42, 1_000_000, 1_000_000, SONNET) == Cost(0.42, CostSource.AGENT)
    assert cost_of(0.0, 10, 10, SONNET) == Cost(0.0, CostSource.AGENT)
    assert cost_of(-1.0, 10, 10, None) == Cost(0.0, CostSource.AGENT)  # never negative


def test_tokens_are_priced_per_million_without_a_figure_of_the_agents() -> None:
    assert cost_of(None, 1_000_000, 0, SONNET) == Cost(3.0, CostSource.PRICES)
    assert cost_of(None, 0, 1_000_000, SONNET) == Cost(15.0, CostSource.PRICES)
    assert cost_of(None, 2_000, 1_000, SONNET) == Cost(0.021, CostSource.PRICES)


def test_a_turn_with_no_figure_and_no_price_costs_an_unknown_amount() -> None:
    assert cost_of(None, 1_000, 1_000, None) is None


@pytest.mark.parametrize(
    ("provider", "model", "price"),
    [
        ("anthropic", "claude-sonnet-4", Price(3.0, 15.0)),  # exact
        ("anthropic", "claude-sonnet-4-5", Price(4.0, 16.0)),  # exact beats a prefix
        ("anthropic", "claude-sonnet-4-5-20250929", Price(4.0, 16.0)),  # the longest prefix
        ("anthropic", "claude-sonnet-4-20250514", Price(3.0, 15.0)),
        ("anthropic", "claude-opus-4", None),  # no entry, no `*`
        ("anthropic", None, None),
        ("demo", "anything", Price(0.0, 0.0)),  # the provider's `*`
        ("demo", None, Price(0.0, 0.0)),
        ("openai", "gpt-5", None),  # no such provider
        (None, "claude-sonnet-4", None),
    ],
)
def test_a_model_is_found_exactly_then_by_its_longest_prefix_then_by_star(
    provider, model, price
) -> None:
    assert price_of(TABLE, provider, model) == price


def test_the_cap_day_is_the_utc_day() -> None:
    late = datetime(2026, 12, 1, 23, 59, 59, tzinfo=UTC)
    assert day_start(late) == datetime(2026, 12, 1, tzinfo=UTC)
    assert next_day_start(late) == datetime(2026, 12, 2, tzinfo=UTC)
    # 01:00 in UTC+2 is still the day before in UTC
    east = datetime(2026, 12, 2, 1, 0, tzinfo=timezone(timedelta(hours=2)))
    assert day_start(east) == datetime(2026, 12, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    ("spent", "cap", "stops"),
    [
        (0.0, 0.0, False),  # no cap
        (1e9, 0.0, False),  # no cap, whatever was spent
        (9.99, 10.0, False),
        (10.0, 10.0, True),  # reached
        (10.01, 10.0, True),
        (0.0, 0.01, False),
    ],
)
def test_new_orders_stop_once_the_days_spend_reaches_a_set_cap(spent, cap, stops) -> None:
    assert spend_stops(spent, cap) is stops


def test_a_capped_round_plans_nothing_and_says_so_in_one_sentence() -> None:
    facts = RoundFacts(
        Limits(4, elsewhere=True),
        candidates=(Candidate(1, boundary=("a.py",)), Candidate(2, boundary=("b.py",))),
        keys=(0, 1),
        spent_today_usd=12.5,
        spend_cap_usd=10.0,
    )
    plan = plan_round(facts)
    assert plan.orders == () and plan.refusal == SpendCapped(12.5, 10.0) and plan.needs_you
    assert (
        render(plan.refusal)
        == capped_sentence(12.5, 10.0)
        == (
            "today's spend $12.50 reached HIVE_SPEND_CAP_USD=$10.00: no new orders until"
            " 00:00 UTC; running bees finish"
        )
    )
    under = plan_round(RoundFacts(**{**facts.__dict__, "spent_today_usd": 9.0}))
    assert under.orders == (Planned(1, 0), Planned(2, 1)) and under.refusal is None


def test_a_cap_with_nothing_to_dispatch_is_no_news() -> None:
    facts = RoundFacts(Limits(4, elsewhere=True), keys=(0,), spent_today_usd=50, spend_cap_usd=1)
    assert plan_round(facts).refusal is None
