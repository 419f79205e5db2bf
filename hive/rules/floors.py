"""Floors (RULES 4): how long an order rests in EMPTY, SENDBACK or WAIT before
FLOOR_PASSED releases its issue (RELEASED), so work nobody takes up does not keep its
issue from a new attempt for good.

A floor runs from when the order came to its state: EMPTY and SENDBACK from their
verdict (`reviewed_at`, or `finished_at` for a row never reviewed), WAIT from the work's
finish: the reviewer visits a waiting row again and again, each visit stamping
`reviewed_at`, so a floor read from that would never pass. Pure: the ages come in as
arguments.
"""

from __future__ import annotations

from hive.rules.states import WAIT, floor_passed


def floor_age_seconds(
    state: int, since_finish_seconds: float, since_review_seconds: float | None
) -> float:
    """How long an order in `state` has rested there, as its floor reads it."""
    if state == WAIT or since_review_seconds is None:
        return since_finish_seconds
    return since_review_seconds


def released_at_floor(
    state: int, since_finish_seconds: float, since_review_seconds: float | None
) -> bool:
    """Whether an order in `state`, finished and reviewed that long ago, has passed its
    floor (a state with no floor never does)."""
    age = floor_age_seconds(state, since_finish_seconds, since_review_seconds)
    return floor_passed(state, int(age))
