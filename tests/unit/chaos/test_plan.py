"""The seeded plan: the same seed gives the same run; each fault kind comes as often as
the shape says, inside the window, apart from one another."""

from __future__ import annotations

import itertools
from collections import Counter

from hive.chaos.plan import AIMED, FAULT_GAP_SECONDS, FaultKind, big, looped, make_plan, small


def test_the_same_seed_gives_the_same_plan_and_another_seed_another():
    assert make_plan(small(), 7) == make_plan(small(), 7)
    assert make_plan(small(), 7) != make_plan(small(), 8)


def test_a_small_run_has_one_fault_of_each_kind_within_its_window():
    shape = small()
    plan = make_plan(shape, 15)
    assert Counter(f.kind for f in plan.faults) == Counter(k for k in FaultKind if k not in AIMED)
    assert plan.pushes == ()
    assert all(0 < f.at_seconds <= shape.fault_seconds for f in plan.faults)
    assert set(plan.ticks) == set(range(1, shape.orders + 1))
    low, high = shape.turn_ticks
    assert all(low <= t <= high for t in plan.ticks.values())


def test_a_big_run_restarts_postgres_twice_and_its_faults_keep_apart():
    shape = big(orders=300, runners=6, minutes=5)
    plan = make_plan(shape, 1)
    kinds = Counter(f.kind for f in plan.faults)
    assert kinds[FaultKind.RESTART_POSTGRES] == 2
    assert kinds[FaultKind.KILL_RUNNER] >= 2 and kinds[FaultKind.STALL_RUNNER] >= 1
    times = sorted(f.at_seconds for f in plan.faults)
    assert all(b - a >= FAULT_GAP_SECONDS / 2 for a, b in itertools.pairwise(times))
    assert all(0 <= f.target < 6 for f in plan.faults)


def test_a_looped_run_adds_the_aimed_faults_and_a_persons_pushes_half_of_them_conflicts():
    shape = looped(small(20))
    plan = make_plan(shape, 15)
    assert Counter(f.kind for f in plan.faults) == Counter(list(FaultKind))
    assert len(plan.pushes) == 4 and [p.conflict for p in plan.pushes] == [False, True] * 2
    assert all(0 < p.at_seconds <= shape.fault_seconds for p in plan.pushes)
    # the turns and the faults of a seed are the same, aimed ones aside
    base = make_plan(small(20), 15)
    assert plan.ticks == base.ticks
    grown = looped(big(minutes=5))
    assert grown.person_pushes == 30 and grown.queen_kills_publishing == grown.queen_kills
    assert grown.postgres_restarts_publishing == 1
