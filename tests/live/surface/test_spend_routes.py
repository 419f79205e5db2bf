"""Spend where people read it: GET /api/orders (each attempt's tokens and cost), GET
/api/issues/<n> (every attempt of the issue), `hive status` (the UTC day by key against
HIVE_SPEND_CAP_USD, and each key's rest), on the real database over loopback."""

from __future__ import annotations

import pytest

from hive.commands.status import table
from hive.rules.spend import Cost, CostSource
from hive.rules.states import Outcome
from hive.services.status import report
from hive.store import endings, issues, orders
from hive.store.issues import NewIssue
from hive.store.orders import Fence
from tests.unit.surface.helpers import bearer, call

from .conftest import TOKEN, settings_for

pytestmark = pytest.mark.live


def _attempt(world, issue: int, outcome: Outcome, cost: float | None, tokens: int = 0) -> None:
    made = world.queue_order(issue)
    priced = None if cost is None else Cost(cost, CostSource.PRICES)
    ending = endings.OrderEnding(
        Fence(issue, made.conversation_id, None),
        outcome,
        input_tokens=tokens,
        output_tokens=tokens,
        provider="anthropic",
        model="claude-sonnet-4-5",
        cost=priced,
    )
    assert endings.end(world.db, ending)


def test_the_api_shows_each_attempts_cost_and_every_attempt_of_an_issue(world, serve):
    issues.upsert(world.db, 1, NewIssue(title="one", boundary=["README.md"]))
    _attempt(world, 1, Outcome.ENDED_BADLY, 0.5, tokens=100)
    _attempt(world, 1, Outcome.ENDED_BADLY, 0.25, tokens=10)  # archives the first attempt
    server = serve(token=TOKEN)
    (listed,) = call(server, "GET", "/api/orders", headers=bearer(TOKEN)).json()
    assert (listed["cost_usd"], listed["cost_source"], listed["input_tokens"]) == (
        0.25,
        "prices",
        10,
    )
    assert (listed["provider"], listed["model"]) == ("anthropic", "claude-sonnet-4-5")
    shown = call(server, "GET", "/api/issues/1", headers=bearer(TOKEN)).json()
    assert shown["spend"] == {
        "attempts": 2,
        "cost_usd": 0.75,
        "unpriced": 0,
        "input_tokens": 110,
        "output_tokens": 110,
    }


def test_status_shows_the_days_spend_against_the_cap_and_each_keys_rest(world):
    key = "status-key-0123456789"
    settings = settings_for(world, HIVE_SPEND_CAP_USD="1", HIVE_WORKER_KEY=key)
    from hive.rules.keys import key_slots

    slot = key_slots(settings.worker_keys)[0]
    new = orders.NewOrder(1, "queen-1", "main", key_index=0, key_fingerprint=slot.fingerprint)
    assert orders.insert(world.db, new, queued=True) is orders.Insertion.WRITTEN
    made = orders.get(world.db, 1)
    assert made is not None
    ending = endings.OrderEnding(
        Fence(1, made.conversation_id, None),
        Outcome.QUOTA_EXHAUSTED,
        cost=Cost(1.5, CostSource.AGENT),
    )
    assert endings.end(world.db, ending)
    _attempt(world, 2, Outcome.ENDED_BADLY, None)
    shown = report(settings, world.db)
    spend = shown["spend"]
    assert (spend["today_usd"], spend["cap_usd"], spend["capped"]) == (1.5, 1.0, True)
    assert (spend["attempts"], spend["unpriced"]) == (2, 1)
    assert [(k["key_index"], k["cost_usd"]) for k in spend["by_key"]] == [(0, 1.5), (None, 0.0)]
    (shown_key,) = shown["keys"]
    assert 3590 < shown_key["rests_seconds"] <= 3600
    assert shown_key["rest_reason"] == "quota exhausted"
    text = table(shown)
    assert "SPEND (UTC day)" in text
    assert (
        "$1.50 over 2 attempts of a $1.00 cap: reached, no new orders until 00:00 UTC;"
        " 1 attempts with an unknown cost" in text
    )
