"""The seeded plan: the same seed gives the same run; each fault kind comes as often as
the shape says, inside the window, apart from one another."""

from __future__ import annotations

import itertools
from collections import Counter

from hive.chaos.plan import FAULT_GAP_SECONDS, FaultKind, big, make_plan, small


def test_the_same_seed_gives_the_same_plan_and_another_seed_another():
    assert make_plan(small(), 7) == make_plan(small(), 7)
    assert make_plan(small(), 7) != make_plan(small(), 8)


def test_a_small_run_has_one_fault_of_each_kind_within_its_window():
    shape = small()
    plan = make_plan(shape, 15)
    assert Counter(f.kind for f in plan.faults) == Counter(list(FaultKind))
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
