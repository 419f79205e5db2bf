"""Who goes next (RULES 5): priority levels, aging, the critical cap and candidate skips.

The order is total: effective level, then a real level before an aged one, then listing
order (issue number), so two rounds over the same facts pick the same issue.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import Enum, IntEnum, auto

from hive.rules.holds import HeldOrder, held_paths, overlapping
from hive.rules.states import ACCEPT, EMPTY, ENDED, ESCALATE, ILLEGAL, NONE, RUNNING, WAIT, State


class Level(IntEnum):
    """How urgent an issue is: lower goes first."""

    CRITICAL = 0
    HIGH = 1
    NORMAL = 2
    LOW = 3


CRITICAL = Level.CRITICAL
HIGH = Level.HIGH
NORMAL = Level.NORMAL
LOW = Level.LOW
LEVEL_NAMES = ("critical", "high", "normal", "low")

LABELS: dict[str, Level] = {
    "P0": CRITICAL,
    "priority/critical": CRITICAL,
    "critical": CRITICAL,
    "P1": HIGH,
    "priority/high": HIGH,
    "high-priority": HIGH,
    "P2": NORMAL,
    "priority/medium": NORMAL,
    "P3": LOW,
    "P4": LOW,
    "priority/low": LOW,
}

# At most this many issues run as critical; the next ones run as HIGH, in listing order,
# so a flood of P0 labels cannot starve everything else.
CRITICAL_CAP = 3
# A labelled NORMAL or LOW issue gains one level after this long, never up to CRITICAL.
AGING_DAYS = 14
AGING_SECONDS = AGING_DAYS * 86400
MAX_AGING_STEPS = 1


def label_level(labels: Iterable[str]) -> Level | None:
    """The most urgent priority label's level, or None when the issue has none."""
    levels = [LABELS[label] for label in labels if label in LABELS]
    return min(levels) if levels else None


def aged_level(labelled_level: Level | None, age_seconds: int) -> tuple[Level, bool]:
    """(level, aged): an unlabelled issue is NORMAL and never ages; a labelled NORMAL or LOW
    one gains MAX_AGING_STEPS level once AGING_SECONDS old, never up to CRITICAL."""
    if labelled_level is None:
        return NORMAL, False
    if labelled_level >= NORMAL and age_seconds >= AGING_SECONDS:
        return Level(max(HIGH, labelled_level - MAX_AGING_STEPS)), True
    return labelled_level, False


@dataclass(frozen=True)
class Candidate:
    """An open issue as a round sees it: `state` is its order's (NONE: it has none), and
    `review_note` that order's last review note."""

    number: int
    labels: tuple[str, ...] = ()
    age_seconds: int = 0
    boundary: tuple[str, ...] = ()
    open_blocker: bool = False
    state: State = NONE
    review_note: str = ""


class Skip(Enum):
    """Why a candidate does not go this round."""

    OPEN_BLOCKER = auto()
    LIVE_ORDER = auto()
    ACCEPTED = auto()
    AWAITING_REVIEW = auto()
    NO_BOUNDARY = auto()
    HELD = auto()  # its boundary overlaps files another order holds
    ESCALATED = auto()  # a person decides
    EMPTY = auto()  # its last attempt committed nothing: it waits for its floor
    UNKNOWN_STATE = auto()  # its row is in no state of the table


# The order states that keep an issue from a new attempt. Every other state lets one go
# (no order, SENDBACK, STALE, REAPED, REFUSED, RELEASED): they are the states a new
# attempt may replace (`lifecycle.may_replace`).
SKIP_BY_STATE: dict[State, Skip] = {
    RUNNING: Skip.LIVE_ORDER,
    ENDED: Skip.AWAITING_REVIEW,
    WAIT: Skip.AWAITING_REVIEW,
    ACCEPT: Skip.ACCEPTED,
    ESCALATE: Skip.ESCALATED,
    EMPTY: Skip.EMPTY,
    ILLEGAL: Skip.UNKNOWN_STATE,
}


@dataclass(frozen=True)
class Skipped:
    """A candidate left out this round, and why (HELD names the overlapping paths,
    ESCALATED carries the first line of the review's note)."""

    number: int
    why: Skip
    paths: tuple[str, ...] = ()
    note: str = ""


def skip_reason(candidate: Candidate, held: Iterable[str]) -> Skipped | None:
    """Why a candidate is skipped this round (the first reason that holds), or None when
    it may go. An escalated issue is named before anything else: a person must act on it
    whatever else holds it."""
    by_state = SKIP_BY_STATE.get(candidate.state)
    if by_state is Skip.ESCALATED:
        return Skipped(candidate.number, by_state, note=first_line(candidate.review_note))
    flags = (
        (candidate.open_blocker, Skip.OPEN_BLOCKER),
        (by_state is not None, by_state),
        (not candidate.boundary, Skip.NO_BOUNDARY),
    )
    for flagged, why in flags:
        if flagged and why is not None:
            return Skipped(candidate.number, why)
    clash = overlapping(candidate.boundary, held)
    return Skipped(candidate.number, Skip.HELD, clash) if clash else None


def first_line(note: str) -> str:
    """A note's first non-blank line, without a trailing colon (a sentence's clause)."""
    for line in note.splitlines():
        if line.strip():
            return line.strip().rstrip(":").rstrip()
    return ""


@dataclass(frozen=True)
class Ranked:
    """A candidate's place in the order: its effective level and whether it got it by aging."""

    number: int
    level: Level
    aged: bool

    def sort_key(self) -> tuple[int, bool, int]:
        return (self.level, self.aged, self.number)


def rank(candidates: Sequence[Candidate], running_critical: int = 0) -> list[Ranked]:
    """The candidates in the order they go, with `running_critical` criticals already running.

    Only CRITICAL_CAP issues run as critical: later criticals in listing order run as HIGH.
    A demoted critical still ranks as a real HIGH, ahead of one that only aged into HIGH.
    """
    room = max(0, CRITICAL_CAP - running_critical)
    ranked: list[Ranked] = []
    for candidate in sorted(candidates, key=lambda c: c.number):
        level, aged = aged_level(label_level(candidate.labels), candidate.age_seconds)
        if level == CRITICAL:
            if room > 0:
                room -= 1
            else:
                level = HIGH
        ranked.append(Ranked(candidate.number, level, aged))
    return sorted(ranked, key=Ranked.sort_key)


def order_candidates(
    candidates: Sequence[Candidate], held: Sequence[HeldOrder], running_critical: int = 0
) -> tuple[list[Ranked], list[Skipped]]:
    """A round's choice in one call: the candidates that may go, in order, and every skipped
    one with its reason (for the round's report), in listing order.

    The files an order holds are held from every other issue, never from its own: a
    sent-back issue's next attempt takes up the files its last one held.
    Skipped issues are left out before the critical cap is applied, so a blocked critical
    never takes one of the three places.
    """
    eligible: list[Candidate] = []
    skipped: list[Skipped] = []
    for candidate in sorted(candidates, key=lambda c: c.number):
        skip = skip_reason(candidate, held_paths(held, except_issue=candidate.number))
        if skip is None:
            eligible.append(candidate)
        else:
            skipped.append(skip)
    return rank(eligible, running_critical), skipped


def capacity(max_workers: int, free_key_lanes: int, container_room: int | None = None) -> int:
    """How many bees may start now: the least of the limits (the container guard counts
    only for bees run in this process; None when they run elsewhere)."""
    limits = [max_workers, free_key_lanes]
    if container_room is not None:
        limits.append(container_room)
    return max(0, min(limits))
