"""How a turn's ending becomes the order's outcome (RULES 4 labels)."""

from __future__ import annotations

from hive.actors.ending import order_outcome
from hive.agents import REASON_BOUND, Ending


def test_a_stopped_turn_handed_back_is_handed_back():
    assert order_outcome(Ending("stopped", 1.0, stop_reason="handed back"), True) == (
        "handed back",
        None,
    )


def test_a_turn_stopped_at_its_bound_ended_badly_and_says_why():
    ending = Ending("stopped", 3600.0, stop_reason=REASON_BOUND)
    assert order_outcome(ending, False) == (
        "ended badly",
        "stopped past its bound (HIVE_TURN_MAX_SECONDS)",
    )


def test_a_turn_that_finished_before_its_hand_back_keeps_its_outcome():
    assert order_outcome(Ending("finished", 1.0), True) == ("finished", None)


def test_refusals_are_sorted_by_the_keys_card():
    quota = Ending("refused", 1.0, refusal="insufficient_quota")
    assert order_outcome(quota, False)[0] == "quota exhausted"
    transient = Ending("refused", 1.0, refusal="rate_limit")
    assert order_outcome(transient, False)[0] == "refused"
    other = Ending("refused", 1.0, refusal="teapot")
    assert order_outcome(other, False)[0] == "ended badly"


def test_the_adapters_own_labels_pass_through():
    for label in ("finished", "ended badly", "ended unexpectedly"):
        assert order_outcome(Ending(label, 1.0), False) == (label, None)
