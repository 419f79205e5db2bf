"""The seeded part of a chaos run: each order's turn length and the fault schedule.

Pure: the same `Shape` and seed always give the same `Plan`. Faults are spread over the
fault window in a shuffled order, at least FAULT_GAP_SECONDS apart, so each one's effect
(a replacement starting, a reap, a restart) can be told from the next's.

With --loop (`looped`) the schedule also holds faults aimed at a moment (a Queen killed
mid-publish and mid-review, PostgreSQL restarted during a publish job: each waits for
its moment from its time on), a person's pushes to the base (`Push`, every other one
editing the file of an issue the hive works on, so conflicts and clean three-way merges
both happen), and each issue's priority label (`priorities`).
"""

from __future__ import annotations

import enum
import random
from dataclasses import dataclass, replace

FAULT_GAP_SECONDS = 2.0
TICK_SECONDS = 0.1  # the agent's pace: one log line per tick


class FaultKind(enum.Enum):
    KILL_RUNNER = "SIGKILL runner"
    TERM_RUNNER = "SIGTERM runner"
    KILL_QUEEN = "SIGKILL queen"
    TERM_QUEEN = "SIGTERM queen"
    RESTART_POSTGRES = "restart postgres"
    STALL_RUNNER = "SIGSTOP/SIGCONT runner"
    KILL_QUEEN_PUBLISHING = "SIGKILL queen mid-publish"
    KILL_QUEEN_REVIEWING = "SIGKILL queen mid-review"
    RESTART_POSTGRES_PUBLISHING = "restart postgres mid-publish"


# the kinds that wait for their moment (an event in the store or a log) before they strike
AIMED = (
    FaultKind.KILL_QUEEN_PUBLISHING,
    FaultKind.KILL_QUEEN_REVIEWING,
    FaultKind.RESTART_POSTGRES_PUBLISHING,
)


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
    # --loop only (`looped`): faults aimed at a moment, and a person's pushes
    queen_kills_publishing: int = 0
    queen_kills_reviewing: int = 0
    postgres_restarts_publishing: int = 0
    person_pushes: int = 0


@dataclass(frozen=True)
class Fault:
    at_seconds: float  # after the run's start
    kind: FaultKind
    target: int  # which runner slot (0..runners-1); 0 for the Queen and PostgreSQL


@dataclass(frozen=True)
class Push:
    """A person's push to the base: `conflict` edits the file of an issue the hive is
    working on (its merge then conflicts), else a file of the person's own."""

    at_seconds: float
    conflict: bool


@dataclass(frozen=True)
class Plan:
    seed: int
    ticks: dict[int, int]  # issue -> its turn's ticks
    faults: tuple[Fault, ...]
    pushes: tuple[Push, ...] = ()


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


def looped(shape: Shape) -> Shape:
    """`shape` with --loop's more: faults aimed at a publish and a review, and a person
    pushing to the base every 10 s or so of the fault window (4 at least)."""
    aimed = max(1, shape.queen_kills)
    return replace(
        shape,
        queen_kills_publishing=aimed,
        queen_kills_reviewing=aimed,
        postgres_restarts_publishing=max(1, shape.postgres_restarts // 2),
        person_pushes=max(4, int(shape.fault_seconds // 10)),
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
        + [FaultKind.KILL_QUEEN_PUBLISHING] * shape.queen_kills_publishing
        + [FaultKind.KILL_QUEEN_REVIEWING] * shape.queen_kills_reviewing
        + [FaultKind.RESTART_POSTGRES_PUBLISHING] * shape.postgres_restarts_publishing
    )
    rng.shuffle(kinds)
    faults = []
    step = max(FAULT_GAP_SECONDS, shape.fault_seconds / (len(kinds) + 1))
    for n, kind in enumerate(kinds, start=1):
        jitter = rng.uniform(-0.25, 0.25) * step
        runner = rng.randrange(shape.runners) if _on_runner(kind) else 0
        faults.append(Fault(round(n * step + jitter, 2), kind, runner))
    return Plan(seed, ticks, tuple(faults), _pushes(shape, seed))


def _pushes(shape: Shape, seed: int) -> tuple[Push, ...]:
    """The person's pushes over the fault window, every other one a conflict (their own
    generator: the turns and faults of a seed stay what they were without them)."""
    rng = random.Random(f"person-{seed}")
    step = shape.fault_seconds / (shape.person_pushes + 1)
    return tuple(
        Push(round(n * step + rng.uniform(-0.25, 0.25) * step, 2), conflict=n % 2 == 0)
        for n in range(1, shape.person_pushes + 1)
    )


def _on_runner(kind: FaultKind) -> bool:
    return kind in (FaultKind.KILL_RUNNER, FaultKind.TERM_RUNNER, FaultKind.STALL_RUNNER)
