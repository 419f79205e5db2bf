"""How long each issue sat in one place while a --loop run went on, and the invariant
that none sat longer than its place's bound without moving or a sentence. Pure.

The run samples the store while it waits for the issues (`place_of` names where each
one is). An issue is still while neither it nor its place moves: its stillness counts
from when it came there or when another issue last left that place, whichever is later
(work queued behind other work in a place that drains is moving; a queue that does not
drain is stuck, and so is one issue left behind once the rest went). `Dwell` keeps the
longest stillness seen in each place. An escalated issue carries a sentence for a
person, and a merged one is done: neither is bounded; an issue waiting for a bee is not
either, since the round's report says why (capacity reached, every key busy or resting,
its turn in the priority order). An order the Queen wrote holds its key already: queued,
it waits for a runner's free slot, and that queue drains by the runners' claims, not by
turns ending; so "queued for a runner" is a place of its own, bounded like a turn.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from hive.chaos.invariants import Check
from hive.rules.states import ACCEPT, ENDED, ESCALATE, RUNNING, WAIT

QUEUED_PLACE = "queued for a runner"  # its order (and key) written, no runner claimed it
RUNNING_PLACE = "running"  # a runner claimed it: its turn runs
REVIEW_PLACE = "in review"  # ended, waiting for its review or the pause after a failed one
PUBLISH_PLACE = "publishing"  # accepted: its publish job checks, merges and pushes
WAITING_PLACE = "waiting for a bee"
ESCALATED_PLACE = "escalated"
MERGED_PLACE = "merged"
BOUNDED = (QUEUED_PLACE, RUNNING_PLACE, REVIEW_PLACE, PUBLISH_PLACE)


def place_of(state: int | None, closed: bool, merged: bool, queued: bool = False) -> str:
    """Where an issue is, from its order's state code (None: no order yet); `queued`: its
    order waits for a runner's claim."""
    if closed and merged:
        return MERGED_PLACE
    if state == RUNNING:
        return QUEUED_PLACE if queued else RUNNING_PLACE
    if state in (ENDED, WAIT):
        return REVIEW_PLACE
    if state == ACCEPT:
        return PUBLISH_PLACE
    if state == ESCALATE:
        return ESCALATED_PLACE
    return WAITING_PLACE


@dataclass
class Dwell:
    """Each issue's current place and since when, when each place last lost an issue,
    and the longest stillness seen in each place."""

    since: dict[int, tuple[str, float]] = field(default_factory=dict)
    moved: dict[str, float] = field(default_factory=dict)
    longest: dict[str, tuple[float, int]] = field(default_factory=dict)
    samples: int = 0

    def see(self, at: float, places: Mapping[int, str]) -> None:
        """One sample at `at` seconds: each issue's place now."""
        self.samples += 1
        for issue, place in places.items():
            was = self.since.get(issue)
            if was is not None and was[0] != place:
                self._still(issue, was[0], was[1], at)  # until this sample saw it gone
                self.moved[was[0]] = at
            if was is None or was[0] != place:
                self.since[issue] = (place, at)
        for issue, (place, came) in sorted(self.since.items()):
            self._still(issue, place, came, at)

    def _still(self, issue: int, place: str, came: float, at: float) -> None:
        still = at - max(came, self.moved.get(place, came))
        if still > self.longest.get(place, (-1.0, 0))[0]:
            self.longest[place] = (still, issue)


def sat_within_bounds(dwell: Dwell, bounds: Mapping[str, float]) -> Check:
    """No issue stayed in a bounded place longer than its bound."""
    bad = []
    shown = []
    for place in BOUNDED:
        seconds, issue = dwell.longest.get(place, (0.0, 0))
        shown.append(f"{place} {seconds:.0f} s")
        if seconds > bounds[place]:
            bad.append(
                f"#{issue}: {seconds:.0f} s {place}, past its bound of {bounds[place]:.0f} s"
            )
    return Check(
        "no issue sits past its state's bound",
        f"longest still: {', '.join(shown)} ({dwell.samples} samples)",
        tuple(bad),
    )
