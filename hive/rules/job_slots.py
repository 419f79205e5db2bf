"""How many jobs a job runner runs side by side, how many it claims, and in what order.

A Queen's job runner runs up to HIVE_PUBLISH_JOBS publish jobs at once, each on a thread
of its own, so one job whose check hangs (or whose forge makes it wait) holds no other.
It claims only what it can start now (`claim_batch`): a claimed job that waited for a
free slot would sit under a claim no one works on, and another Queen could not take it.

Where every job pushes into one base with checks on the exact merge (HIVE_PUBLISH=push),
each push makes the checks of every job beside it run again on the new merge: jobs side
by side there only burn their checks (a big chaos run checked one issue on 15 merges).
So that base is a lane (`start_batch`): one run at a time enters it, and the next only
once the run in it ended or has held it HIVE_PUBLISH_LANE_SECONDS; a run held longer (a
check that hangs) holds no other past that bound. A forge that merges by its own API
(HIVE_PUBLISH=github) has no lane.

Due jobs are claimed oldest due first (`due_since`): a job is due from when its claim
ran out, or, never claimed since it became ready (made, woken from a wait, given back),
from then. So a job whose claim ran out (its process died, its step raised) waits behind
no job that became due after it, and none is starved while slots keep freeing.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from hive.rules.waits import CLAIM_BATCH

PUBLISH_JOBS_DEFAULT = 4
PUBLISH_JOBS_MAX = CLAIM_BATCH  # one claim's batch fills every slot
LANE_SECONDS_DEFAULT = 60  # a publish run's usual length on a loaded machine, and more
LANE_SECONDS_MAX = 3600


def claim_batch(slots: int, running: int) -> int:
    """How many due jobs to claim with `running` of `slots` busy: the free slots, never
    more than a claim's batch, never below 0."""
    return max(0, min(slots - running, CLAIM_BATCH))


def start_batch(slots: int, running_seconds: Sequence[float], lane_seconds: float) -> int:
    """How many due jobs to claim and start now, `running_seconds` being how long each
    run in hand has run: the free slots (`claim_batch`); with a lane (`lane_seconds`
    above 0), none while a run younger than `lane_seconds` holds it, else one."""
    free = claim_batch(slots, len(running_seconds))
    if lane_seconds <= 0:
        return free
    if any(age < lane_seconds for age in running_seconds):
        return 0
    return min(free, 1)


def due_since(claim_due_at: datetime | None, ready_at: datetime) -> datetime:
    """Since when a ready job is due: when its claim ran out, or (never claimed since it
    became ready at `ready_at`) since then. The claim takes the earliest first
    (`claim_jobs` orders by the same)."""
    return ready_at if claim_due_at is None else claim_due_at
