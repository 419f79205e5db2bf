"""Who goes next, under chaos (--loop; RULES 5): the run's issues carry priority labels,
and some labelled ones were opened past their ageing bound (AGING_SECONDS ago), so they
go up one level. Pure.

- `labels`: each issue's label (seeded): at most CRITICAL_CAP criticals (a fourth would
  run as high, which `rank` says but a run's order cannot show apart from a free slot),
  then high, normal and low ones, and the unlabelled rest; `aged`: the labelled normal
  and low issues opened past the bound.
- `went_in_order`: no issue was first dispatched after one that ranks below it (level
  with ageing, a real level before an aged one, then number: `hive.rules.priority.rank`).
  An aged issue dispatched after a fresh one of its own label starved past its bound.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from datetime import datetime

from hive.chaos.invariants import Check
from hive.rules.priority import AGING_SECONDS, CRITICAL_CAP, LEVEL_NAMES, Candidate, rank

# the share of issues with each label; the rest have none (normal, never aged)
SHARES = (("P1", 0.15), ("P2", 0.15), ("P3", 0.15))
CRITICAL_EVERY = 50  # one critical in this many issues, CRITICAL_CAP at most
AGED_SHARE = 1 / 3  # of the labelled normal and low issues
AGED_BY_SECONDS = AGING_SECONDS + 86400  # a day past the bound: aged the whole run


def labels(issues: Sequence[int], seed: int) -> tuple[dict[int, str], frozenset[int]]:
    """({issue: its label, absent: none}, the issues opened past their ageing bound)."""
    pick = random.Random(f"priority-{seed}")
    ordered = sorted(issues)
    criticals = min(CRITICAL_CAP, max(1, len(ordered) // CRITICAL_EVERY)) if ordered else 0
    said = dict.fromkeys(pick.sample(ordered, criticals), "P0")
    aged = set()
    for n in ordered:
        if n in said:
            continue
        roll, low = pick.random(), 0.0
        for label, share in SHARES:
            if low <= roll < low + share:
                said[n] = label
                if label != "P1" and pick.random() < AGED_SHARE:
                    aged.add(n)
            low += share
    return said, frozenset(aged)


def went_in_order(
    said: Mapping[int, str], aged: frozenset[int], first: Mapping[int, datetime]
) -> Check:
    """`first`: each issue's first dispatch (the Queen's choice). Each issue is checked
    against the ones ranked above it: none of those may have been chosen later."""
    candidates = [
        Candidate(n, (said[n],) if n in said else (), AGED_BY_SECONDS if n in aged else 0)
        for n in sorted(first)
    ]
    order = rank(candidates)
    by_number = {place.number: place for place in order}
    bad = []
    latest: tuple[datetime, int] | None = None  # the latest first dispatch ranked above
    for place in order:
        at = first[place.number]
        if latest is not None and at < latest[0]:
            above = latest[1]
            bad.append(
                f"#{place.number} ({_level(place.level, place.aged)}) went before"
                f" #{above} ({_level(by_number[above].level, by_number[above].aged)})"
            )
        if latest is None or at > latest[0]:
            latest = (at, place.number)
    aged_ahead = sum(1 for place in order if place.aged)
    return Check(
        "who goes next: by level and ageing",
        f"{len(order)} first dispatches, {len(said)} labelled, {aged_ahead} aged past"
        f" {AGING_SECONDS // 86400} days",
        tuple(bad),
    )


def _level(level: int, aged: bool) -> str:
    return LEVEL_NAMES[level] + (", aged" if aged else "")
