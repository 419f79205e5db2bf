"""Waits (RULES 9; waits.t27): durable rows that wake their owner at a time or on an event.

Only a waiting row moves, and the first resolution wins. The owner is woken only by the
write that moved the row, so a late second resolution never wakes anyone twice. A deploy
writes nothing to a wait: the next process takes it up once the old claim runs out.
"""

from __future__ import annotations

from enum import IntEnum


class WaitState(IntEnum):
    """Where a wait row is; only WAITING moves."""

    WAITING = 0
    RESOLVED = 1
    EXPIRED = 2
    CANCELLED = 3


WAITING = WaitState.WAITING
RESOLVED = WaitState.RESOLVED
EXPIRED = WaitState.EXPIRED
CANCELLED = WaitState.CANCELLED

# The longest a wait may be set for.
WAIT_MAX_SECONDS = 86400
# A scheduler's claim on a due row lasts this long; rows are claimed this many at a time.
CLAIM_TTL_SECONDS = 60
CLAIM_BATCH = 32
# The scheduler polls at least this often (a NOTIFY is only a hint), never more often than
# the floor, and sooner when the nearest row is due sooner.
SCHEDULER_POLL_SECONDS = 15
SCHEDULER_POLL_MIN_SECONDS = 1


def wait_move(state: int, to_state: int) -> WaitState | None:
    """The state after a write that moves a wait to `to_state`, or None if it does not land."""
    if state != WAITING:
        return None  # first resolution wins: a moved row stays where it went
    if to_state not in (RESOLVED, EXPIRED, CANCELLED):
        return None
    return WaitState(to_state)


def wakes_owner(moved: bool, to_state: int) -> bool:
    """Only the write that moved the row wakes its owner, and never for a cancel."""
    return moved and to_state in (RESOLVED, EXPIRED)


def wait_problem(key: str | None, wake_in_seconds: int | None) -> str | None:
    """Why a new wait is malformed, or None: it needs a key, a wake time, or both."""
    if key is None and wake_in_seconds is None:
        return "a wait needs a key, a wake time, or both"
    if key is not None and key.strip() == "":
        return "a wait's key is empty"
    if wake_in_seconds is not None and not 0 <= wake_in_seconds <= WAIT_MAX_SECONDS:
        return f"a wait wakes within 0..{WAIT_MAX_SECONDS} s, not {wake_in_seconds} s"
    return None


def claim_row(epoch: int, now_seconds: int) -> tuple[int, int]:
    """A claim bumps the row's epoch and moves its due time CLAIM_TTL_SECONDS ahead."""
    return epoch + 1, now_seconds + CLAIM_TTL_SECONDS


def write_lands(row_epoch: int, claimed_epoch: int) -> bool:
    """A write after a claim lands only at the epoch it claimed."""
    return row_epoch == claimed_epoch


def pickup_after_seconds(claimed: bool, since_claim_seconds: int) -> int:
    """Seconds before another process may take a row: the rest of its claim, if any."""
    if not claimed:
        return 0
    return max(0, CLAIM_TTL_SECONDS - since_claim_seconds)


def poll_delay_seconds(nearest_due_in_seconds: int | None) -> int:
    """How long the scheduler sleeps: 15 s, sooner for the nearest due row, never under 1 s."""
    if nearest_due_in_seconds is None:
        return SCHEDULER_POLL_SECONDS
    return max(SCHEDULER_POLL_MIN_SECONDS, min(SCHEDULER_POLL_SECONDS, nearest_due_in_seconds))
