"""How many jobs a job runner runs side by side, how many it claims, and in what order.

A Queen's job runner runs up to HIVE_PUBLISH_JOBS publish jobs at once, each on a thread
of its own, so one job whose check hangs (or whose forge makes it wait) holds no other.
It claims only what it can start now (`claim_batch`): a claimed job that waited for a
free slot would sit under a claim no one works on, and another Queen could not take it.

Due jobs are claimed oldest due first (`due_since`): a job is due from when its claim
ran out, or, never claimed since it became ready (made, woken from a wait, given back),
from then. So a job whose claim ran out (its process died, its step raised) waits behind
no job that became due after it, and none is starved while slots keep freeing.
"""

from __future__ import annotations

from datetime import datetime

from hive.rules.waits import CLAIM_BATCH

PUBLISH_JOBS_DEFAULT = 4
PUBLISH_JOBS_MAX = CLAIM_BATCH  # one claim's batch fills every slot


def claim_batch(slots: int, running: int) -> int:
    """How many due jobs to claim with `running` of `slots` busy: the free slots, never
    more than a claim's batch, never below 0."""
    return max(0, min(slots - running, CLAIM_BATCH))


def due_since(claim_due_at: datetime | None, ready_at: datetime) -> datetime:
    """Since when a ready job is due: when its claim ran out, or (never claimed since it
    became ready at `ready_at`) since then. The claim takes the earliest first
    (`claim_jobs` orders by the same)."""
    return ready_at if claim_due_at is None else claim_due_at
