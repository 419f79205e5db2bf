"""The seeded part of a chaos run: each order's turn length and the fault schedule.

Pure: the same `Shape` and seed always give the same `Plan`. Faults are spread over the
fault window in a shuffled order, at least FAULT_GAP_SECONDS apart, so each one's effect
(a replacement starting, a reap, a restart) can be told from the next's.
"""

from __future__ import annotations

import enum
import random
from dataclasses import dataclass

FAULT_GAP_SECONDS = 2.0
TICK_SECONDS = 0.1  # the agent's pace: one log line per tick


class FaultKind(enum.Enum):
    KILL_RUNNER = "SIGKILL runner"
    TERM_RUNNER = "SIGTERM runner"
    KILL_QUEEN = "SIGKILL queen"
    TERM_QUEEN = "SIGTERM queen"
    RESTART_POSTGRES = "restart postgres"
    STALL_RUNNER = "SIGSTOP/SIGCONT runner"


@dataclass(frozen=True)
class Shape:
    """How big a run is and how many faults of each kind it gets."""

    orders: int
    runners: int
    fault_seconds: float  # the window the faults fall in
    turn_ticks: tuple[int, int]  # each turn lasts between these many ticks (inclusive)
    silent_minutes: float = 0.1  # HIVE_RUNNER_SILENT_MINUTES: 6 s and a runner is reaped
    runner_kills: int = 1
    runner_terms: int = 1
    queen_kills: int = 1
    queen_terms: int = 1
    postgres_restarts: int = 1
    stalls: int = 1


@dataclass(frozen=True)
class Fault:
    at_seconds: float  # after the run's start
    kind: FaultKind
    target: int  # which runner slot (0..runners-1); 0 for the Queen and PostgreSQL


@dataclass(frozen=True)
class Plan:
    seed: int
    ticks: dict[int, int]  # issue -> its turn's ticks
    faults: tuple[Fault, ...]


def small(orders: int = 90, runners: int = 3) -> Shape:
    """The run `make test` makes: one fault of each kind, turns of 0.5 to 3 s and a 9 s
    silent window, so a turn the stall catches has ended before its order is reaped (a
    turn that outlives the reap overlaps the next attempt: a known limit, which the big
    run shows)."""
    return Shape(orders, runners, fault_seconds=25.0, turn_ticks=(5, 30), silent_minutes=0.15)


def big(orders: int = 300, runners: int = 6, minutes: float = 5.0) -> Shape:
    """The run `make chaos` makes: turns of 2 to 20 s, so 300 orders on 6 runners keep
    working through the 5 minutes of faults; two PostgreSQL restarts, many kills."""
    kills = max(2, int(minutes * 2))
    return Shape(
        orders,
        runners,
        fault_seconds=minutes * 60,
        turn_ticks=(20, 200),
        runner_kills=kills,
        runner_terms=kills,
        queen_kills=max(1, kills // 3),
        queen_terms=max(1, kills // 3),
        postgres_restarts=2,
        stalls=max(1, kills // 3),
    )


def make_plan(shape: Shape, seed: int) -> Plan:
    """The orders' turn lengths and the faults, from `seed` alone."""
    rng = random.Random(seed)
    low, high = shape.turn_ticks
    ticks = {issue: rng.randint(low, high) for issue in range(1, shape.orders + 1)}
    kinds = (
        [FaultKind.KILL_RUNNER] * shape.runner_kills
        + [FaultKind.TERM_RUNNER] * shape.runner_terms
        + [FaultKind.KILL_QUEEN] * shape.queen_kills
        + [FaultKind.TERM_QUEEN] * shape.queen_terms
        + [FaultKind.RESTART_POSTGRES] * shape.postgres_restarts
        + [FaultKind.STALL_RUNNER] * shape.stalls
    )
    rng.shuffle(kinds)
    faults = []
    step = max(FAULT_GAP_SECONDS, shape.fault_seconds / (len(kinds) + 1))
    for n, kind in enumerate(kinds, start=1):
        jitter = rng.uniform(-0.25, 0.25) * step
        runner = rng.randrange(shape.runners) if _on_runner(kind) else 0
        faults.append(Fault(round(n * step + jitter, 2), kind, runner))
    return Plan(seed, ticks, tuple(faults))


def _on_runner(kind: FaultKind) -> bool:
    return kind in (FaultKind.KILL_RUNNER, FaultKind.TERM_RUNNER, FaultKind.STALL_RUNNER)
