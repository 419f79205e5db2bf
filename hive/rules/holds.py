"""Holds (RULES 5): which files an order holds, and for how long.

A boundary held by one order is not given to another, so two bees never edit the same
file at once, and a bee's finished work is not raced by a new attempt while it is judged.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import IntEnum


class Phase(IntEnum):
    """Where an order is, as far as holds go."""

    RUNNING = 0  # in flight: holds its files until it ends
    AWAITING_REVIEW = 1  # finished, not judged yet
    SENT_BACK = 2  # judged and sent back
    ESCALATED = 3  # a person decides: holds nothing
    DONE = 4  # accepted or over: holds nothing


PH_RUNNING = Phase.RUNNING
PH_AWAITING_REVIEW = Phase.AWAITING_REVIEW
PH_SENT_BACK = Phase.SENT_BACK
PH_ESCALATED = Phase.ESCALATED
PH_DONE = Phase.DONE

# How long after its finish an order still holds its files.
AWAITING_REVIEW_HOLD_SECONDS = 30 * 60
SENT_BACK_HOLD_SECONDS = 120 * 60
_HOLD_AFTER_FINISH: dict[int, int] = {
    PH_AWAITING_REVIEW: AWAITING_REVIEW_HOLD_SECONDS,
    PH_SENT_BACK: SENT_BACK_HOLD_SECONDS,
}
# the longest an ended order holds its files (a Queen round reads every order ended since)
HELD_AFTER_FINISH_MAX_SECONDS = max(_HOLD_AFTER_FINISH.values())


def holds_files(phase: int, since_finish_seconds: int) -> bool:
    """Whether an order in `phase`, finished `since_finish_seconds` ago, holds its files."""
    if phase == PH_RUNNING:
        return True
    hold = _HOLD_AFTER_FINISH.get(phase)
    return hold is not None and since_finish_seconds < hold


def blocks_new_start(phase: int) -> bool:
    """Nothing new starts on an issue whose finished work waits for review."""
    return phase == PH_AWAITING_REVIEW


@dataclass(frozen=True)
class HeldOrder:
    """An order as holds see it: its issue, its boundary, its phase, time since finish."""

    issue: int
    boundary: tuple[str, ...]
    phase: Phase
    since_finish_seconds: int = 0


def held_paths(orders: Iterable[HeldOrder], except_issue: int | None = None) -> frozenset[str]:
    """Every path held by an order, leaving out the asking issue's own order."""
    held: set[str] = set()
    for order in orders:
        if order.issue != except_issue and holds_files(order.phase, order.since_finish_seconds):
            held.update(order.boundary)
    return frozenset(held)


def paths_overlap(a: str, b: str) -> bool:
    """Two boundary paths overlap when they are the same, or one is a directory of the other.

    Boundaries are shaped (shape.py): plain relative paths, no trailing slash.
    """
    return a == b or a.startswith(b + "/") or b.startswith(a + "/")


def overlapping(boundary: Iterable[str], held: Iterable[str]) -> tuple[str, ...]:
    """The paths of `boundary` that overlap a held path, sorted, so a report can name them."""
    held_list = list(held)
    return tuple(sorted({p for p in boundary if any(paths_overlap(p, h) for h in held_list)}))
