"""`hive chaos --loop`'s priorities: the seeded labels, and the invariant that the Queen
chose in the order RULES 5 gives (level with ageing, a real level first, then number)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hive.chaos.priority import labels, went_in_order
from hive.rules.priority import CRITICAL_CAP

T0 = datetime(2026, 12, 2, tzinfo=UTC)


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def test_the_labels_are_the_seeds_with_a_few_criticals_and_aged_issues():
    issues = list(range(1, 301))
    said, aged = labels(issues, 4)
    assert (said, aged) == labels(issues, 4) and said != labels(issues, 5)[0]
    assert sum(1 for label in said.values() if label == "P0") == CRITICAL_CAP
    assert {"P0", "P1", "P2", "P3"} == set(said.values())
    assert len(aged) > 0 and all(said[n] in ("P2", "P3") for n in aged)
    assert len(said) < len(issues)  # the rest carry no label
    assert labels([], 4) == ({}, frozenset())
    assert list(labels([7], 4)[0].values()) == ["P0"]


def test_first_dispatches_in_rank_order_hold_and_ties_in_one_round_too():
    said = {1: "P3", 2: "P0", 3: "P2", 4: "P1", 5: "P2"}
    aged = frozenset({3})  # P2 aged: high, after the real high #4
    first = {2: at(0), 4: at(1), 3: at(1), 5: at(2), 6: at(2), 1: at(3)}
    check = went_in_order(said, aged, first)
    assert check.ok, check.violations
    assert check.measured == "6 first dispatches, 5 labelled, 1 aged past 14 days"


def test_an_issue_chosen_before_one_ranked_above_it_is_named():
    said = {1: "P3", 2: "P0", 3: "P2"}
    aged = frozenset({3})
    # the aged #3 (high) waited behind the unlabelled #4 (normal): starved past its bound
    first = {2: at(0), 4: at(1), 3: at(2), 1: at(3)}
    check = went_in_order(said, aged, first)
    assert check.violations == ("#4 (normal) went before #3 (high, aged)",)
    # and a low one before a critical
    late = went_in_order({1: "P3", 2: "P0"}, frozenset(), {1: at(0), 2: at(5)})
    assert late.violations == ("#1 (low) went before #2 (critical)",)
