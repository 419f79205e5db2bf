"""The reviewer (RULES 8): finished work judged on its own clock.

Enough reviews at once to keep up, a pause that doubles for a row that answers `wait`, a
verdict from the criteria, and a merge gate that zero checks can never open.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from hive.rules.states import ACCEPT, ESCALATE, SENDBACK, SENDBACK_CEILING, WAIT, State

# The reviewer's own clock.
REVIEWER_TICK_SECONDS = 10
# A review is a turn bounded at this (so the drain stops it rather than holding it).
REVIEW_ROW_SECONDS = 300
# Never more reviews at once than this, whatever the keys and memory allow.
REVIEW_CONCURRENCY_MAX = 16
# A row that answers `wait` is revisited after this, doubling up to the cap.
WAIT_PAUSE_START_SECONDS = 30
WAIT_PAUSE_CAP_SECONDS = 900


def review_concurrency(
    waiting: int, key_lanes: int, free_memory_mb: int | None, review_memory_mb: int | None
) -> int:
    """How many reviews run at once: 0 when nothing waits, else at least 1.

    min(keys x lanes, 16, free memory / memory per review, waiting); a memory that was not
    measured allows one review, not an unbounded number.
    """
    if waiting <= 0:
        return 0
    by_memory = 1
    if free_memory_mb is not None and review_memory_mb:
        by_memory = free_memory_mb // review_memory_mb
    return max(1, min(key_lanes, REVIEW_CONCURRENCY_MAX, by_memory, waiting))


@dataclass(frozen=True)
class ReviewRow:
    """A finished row that waits for review; `last_visit_seconds` None = never visited."""

    issue: int
    last_visit_seconds: int | None


def rows_to_review(rows: Iterable[ReviewRow], in_review: frozenset[int], n: int) -> list[int]:
    """The issues to review next: never a row already in review; the never-visited first,
    then the longest since its last visit (issue number breaks ties)."""
    free = [row for row in rows if row.issue not in in_review]
    free.sort(
        key=lambda row: (
            row.last_visit_seconds is not None,
            row.last_visit_seconds or 0,
            row.issue,
        )
    )
    return [row.issue for row in free[: max(n, 0)]]


def next_pause_seconds(
    pause_seconds: int, verdict: int, start_seconds: int = WAIT_PAUSE_START_SECONDS
) -> int:
    """The pause before a row is revisited: `wait` starts it (at `start_seconds`) or
    doubles it, up to the cap; anything else resets it."""
    if verdict != WAIT:
        return 0
    if pause_seconds < start_seconds:
        return start_seconds
    return min(pause_seconds * 2, WAIT_PAUSE_CAP_SECONDS)


def review_of(
    criteria: int, judged: int, met: int, committed_files: int, earlier_sendbacks: int
) -> State:
    """The verdict (a State) from what the review judged.

    No criteria: nothing can be accepted, a person decides. Some not judged yet: wait. All
    met: accept only real work (at least one committed file). Some unmet: send back, or
    escalate once it has been sent back SENDBACK_CEILING times already.
    """
    if criteria <= 0:
        return ESCALATE
    if judged < criteria:
        return WAIT
    if met >= criteria:
        return ACCEPT if committed_files > 0 else ESCALATE
    if earlier_sendbacks >= SENDBACK_CEILING:
        return ESCALATE
    return SENDBACK


def merge_gate_open(checks_ran: int, checks_passed: int) -> bool:
    """Accepted work is published only when a check ran and every check that ran passed."""
    return checks_ran >= 1 and checks_passed == checks_ran
