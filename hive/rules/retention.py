"""Retention: what the Queen prunes, and when, so a long-running hive's disk stays flat.

A closed issue's transcripts, attempt history and bundle go once it has been closed for
HIVE_RETENTION_DAYS (an issue with an order in flight keeps everything); round reports
go once they are older than the window (a report is a round's, not an issue's). So do the
issue's check runs and its ended jobs, each with its effects journal and its waits; a
live (ready or parked) job never goes, whatever its issue, nor does anything of it: its
journal is what keeps a resumed step from repeating an effect, and its check runs are
what its gate reads. An ended job that still owns a waiting wait stays with it. Deletes
run in small batches, so a pass never holds a lock for long: a batch that came back full
means more is due, and the next pass comes soon; otherwise the pass waits its interval.

The Queen's own checkout: a worktree `queen-<issue>` whose order has ended (or that has
no order) is removed once it is older than WORKTREE_MIN_AGE_SECONDS (a cut moments ago
may not have its row yet), and the checkout is repacked, dropping what no branch
reaches, once a day or sooner when many branches went.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from enum import Enum

from hive.rules.jobs import LIVE_STATES, JobState
from hive.rules.waits import WAITING, WaitState

RETENTION_DAYS_DEFAULT = 30
RETENTION_DAYS_MIN = 1
RETENTION_DAYS_MAX = 3650

PRUNE_BATCH_ISSUES = 50  # closed issues whose rows one batch deletes
PRUNE_BATCH_ROWS = 1000  # report rows one batch deletes
PRUNE_BATCH_JOBS = 100  # ended jobs one batch deletes, each with its effects and waits
PASS_EVERY_SECONDS = 3600.0  # a pass that found nothing more waits this long
PASS_AGAIN_SECONDS = 5.0  # a pass that filled a batch comes back this soon

WORKTREE_MIN_AGE_SECONDS = 600.0
REPACK_EVERY_SECONDS = 86400.0
REPACK_AFTER_BRANCHES = 100  # branches removed since the last repack that call one now


class Order(Enum):
    """What the store says of a worktree's issue."""

    NONE = "none"  # no order row
    ENDED = "ended"  # its order has finished_at
    IN_FLIGHT = "in_flight"


def cutoff(now: datetime, days: int) -> datetime:
    """What closed (or was reported) before this is past the window."""
    if not RETENTION_DAYS_MIN <= days <= RETENTION_DAYS_MAX:
        raise ValueError(
            f"a retention of {days} days is outside {RETENTION_DAYS_MIN}..{RETENTION_DAYS_MAX}"
        )
    return now - timedelta(days=days)


def issue_due(closed_at: datetime | None, in_flight: bool, now: datetime, days: int) -> bool:
    """Whether a closed issue's transcripts, history and bundle go now: closed at or
    before the cutoff, and no order of it in flight. An open issue never is."""
    return closed_at is not None and not in_flight and closed_at <= cutoff(now, days)


def job_prunable(state: JobState) -> bool:
    """Whether a job of a due issue goes, with its effects and its waits: it has ended
    (done, failed or cancelled). A ready job (perhaps mid-step) or a parked one never
    does, and its check runs stay with it."""
    return state not in LIVE_STATES


def wait_prunable(state: WaitState) -> bool:
    """Whether a wait lets its ended job go, and goes with it: it has moved (resolved,
    expired or cancelled). A job that still owns a waiting wait stays, and the wait with
    it, so a wait is never left without its owner."""
    return state != WAITING


def report_due(at: datetime, now: datetime, days: int) -> bool:
    """Whether a round's report goes now: written at or before the cutoff."""
    return at <= cutoff(now, days)


def worktree_removable(order: Order, age_seconds: float) -> bool:
    """Whether the Queen removes her worktree of an issue: its order is not in flight,
    and it was cut at least WORKTREE_MIN_AGE_SECONDS ago."""
    return order is not Order.IN_FLIGHT and age_seconds >= WORKTREE_MIN_AGE_SECONDS


def repack_due(since_repack_seconds: float, branches_removed: int) -> bool:
    """Whether the checkout is repacked now: a day after the last repack (or the
    process's start), or once REPACK_AFTER_BRANCHES branches went since."""
    return branches_removed >= REPACK_AFTER_BRANCHES or since_repack_seconds >= REPACK_EVERY_SECONDS


def next_pass_seconds(batch_full: bool) -> float:
    """How long the pruner waits before its next pass."""
    return PASS_AGAIN_SECONDS if batch_full else PASS_EVERY_SECONDS
