"""How a turn's ending becomes the order's outcome (RULES 4 labels), and how closing
salvages, bundles and ends the order with both."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from hive.actors.bee.ending import Leftover, close_order, order_ending, order_outcome
from hive.agents import REASON_BOUND, Ending, TurnOutcome
from hive.agents.protocol import Usage
from hive.git.repo import resolve
from hive.git.worktrees import cut_worktree
from hive.rules.states import Outcome
from hive.store import bundles, orders
from hive.store.endings import OrderEnding
from hive.store.orders import Fence, NewOrder
from tests.live.runtime.conftest import add_issue


def test_a_stopped_turn_handed_back_is_handed_back():
    assert order_outcome(Ending(TurnOutcome.STOPPED, 1.0, stop_reason="handed back"), True) == (
        "handed back",
        None,
    )


def test_a_turn_stopped_at_its_bound_ended_badly_and_says_why():
    ending = Ending(
        TurnOutcome.STOPPED, 3600.0, stop_reason=f"{REASON_BOUND} (HIVE_TURN_MAX_SECONDS)"
    )
    assert order_outcome(ending, False) == (
        "ended badly",
        "stopped past its bound (HIVE_TURN_MAX_SECONDS)",
    )


def test_a_turn_that_finished_before_its_hand_back_keeps_its_outcome():
    assert order_outcome(Ending(TurnOutcome.FINISHED, 1.0), True) == ("finished", None)


def test_a_word_outside_the_closed_set_ends_the_order_unexpectedly_and_says_it():
    assert order_outcome(Ending("exploded", 1.0), False) == (
        "ended unexpectedly",
        "the agent's turn ended with 'exploded'",
    )


def test_refusals_are_sorted_by_the_keys_card():
    quota = Ending(TurnOutcome.REFUSED, 1.0, refusal="insufficient_quota")
    assert order_outcome(quota, False)[0] == "quota exhausted"
    transient = Ending(TurnOutcome.REFUSED, 1.0, refusal="rate_limit")
    assert order_outcome(transient, False)[0] == "refused"
    other = Ending(TurnOutcome.REFUSED, 1.0, refusal="teapot")
    assert order_outcome(other, False)[0] == "ended badly"


def test_the_adapters_own_labels_pass_through():
    for turn in (TurnOutcome.FINISHED, TurnOutcome.ENDED_BADLY, TurnOutcome.ENDED_UNEXPECTEDLY):
        assert order_outcome(Ending(turn, 1.0), False) == (turn.value, None)


def test_the_orders_ending_carries_the_turns_outcome_detail_and_usage():
    fence = Fence(1, uuid.uuid4(), "r1")
    usage = Usage(provider="anthropic", model="claude-x", input_tokens=3, output_tokens=4)
    turn = Ending(
        TurnOutcome.STOPPED, 9.0, stop_reason=f"{REASON_BOUND} (HIVE_TURN_MAX_SECONDS)", usage=usage
    )
    assert order_ending(fence, turn, False) == OrderEnding(
        fence,
        Outcome.ENDED_BADLY,
        "stopped past its bound (HIVE_TURN_MAX_SECONDS)",
        input_tokens=3,
        output_tokens=4,
        provider="anthropic",
        model="claude-x",
    )
    assert order_ending(fence, Ending(TurnOutcome.FINISHED, 1.0), False) == OrderEnding(
        fence, Outcome.FINISHED
    )


def _close(rt, issue: int, outcome: Outcome, max_bytes: int):
    """A local order of `issue` whose worktree holds one uncommitted boundary file,
    closed as `outcome` with a bundle cap of `max_bytes`."""
    add_issue(rt.db, issue)
    new = NewOrder(issue, f"queen-{issue}", "main", owned_paths=("src/app.py",))
    assert orders.insert(rt.db, new, queued=False) is orders.Insertion.WRITTEN
    cut = cut_worktree(rt.checkout.repo, issue, "main", rt.checkout.workdir)
    (cut.path / "src/app.py").write_text("print('changed')\n")
    left = Leftover(Path(cut.path), ("src/app.py",), "main", resolve(rt.checkout.repo, "main"))
    ending = OrderEnding(Fence(issue, new.conversation_id, None), outcome, input_tokens=5)
    return close_order(rt.db, rt.checkout, rt.metrics, ending, left, max_bytes)


@pytest.mark.through_pgbouncer
def test_closing_salvages_bundles_and_ends_the_order_with_both(make_runtime):
    rt = make_runtime()
    closing = _close(rt, 1, Outcome.HANDED_BACK, 100 * 1024 * 1024)
    row, stored = orders.get(rt.db, 1), bundles.get(rt.db, 1)
    assert closing.landed and closing.outcome == "handed back"
    assert closing.salvaged_files == ("src/app.py",) and closing.bundle_bytes == len(stored.data)
    assert (row.outcome, row.input_tokens) == ("handed back", 5)
    assert row.salvaged_sha == closing.ending.salvaged_sha == stored.head_sha
    assert rt.checkout.repo[stored.head_sha.encode()].message.startswith(b"salvage (handed back)")


def test_a_bundle_past_its_cap_ends_the_order_badly_without_it(make_runtime):
    rt = make_runtime()
    closing = _close(rt, 2, Outcome.FINISHED, 10)
    row = orders.get(rt.db, 2)
    assert closing.landed and (closing.outcome, closing.bundle_bytes) == ("ended badly", 0)
    assert row.outcome == "ended badly" and "10" in row.detail
    assert row.salvaged_files == ["src/app.py"] and bundles.get(rt.db, 2) is None
