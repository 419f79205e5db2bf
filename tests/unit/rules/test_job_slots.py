"""How many publish jobs run side by side, how many a pass claims, and which first."""

from datetime import UTC, datetime, timedelta

import pytest

from hive.rules.job_slots import (
    LANE_SECONDS_DEFAULT,
    PUBLISH_JOBS_DEFAULT,
    PUBLISH_JOBS_MAX,
    claim_batch,
    due_since,
    start_batch,
)
from hive.rules.waits import CLAIM_BATCH

# (slots, running, jobs a pass claims): never more than it can start now
VECTORS = [
    (4, 0, 4),
    (4, 3, 1),
    (4, 4, 0),
    (4, 5, 0),  # never below 0
    (1, 0, 1),
    (1, 1, 0),
    (32, 0, 32),
    (40, 0, CLAIM_BATCH),  # never past a claim's batch
    (40, 7, CLAIM_BATCH),
    (40, 9, 31),
]


@pytest.mark.parametrize(("slots", "running", "batch"), VECTORS)
def test_a_pass_claims_only_what_its_free_slots_can_start(
    slots: int, running: int, batch: int
) -> None:
    assert claim_batch(slots, running) == batch


def test_the_default_and_the_ceiling_are_pinned() -> None:
    assert PUBLISH_JOBS_DEFAULT == 4
    assert PUBLISH_JOBS_MAX == CLAIM_BATCH == 32


def test_a_job_is_due_since_its_claim_ran_out_or_since_it_became_ready() -> None:
    ready = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
    ran_out = ready - timedelta(minutes=5)
    assert due_since(None, ready) == ready
    assert due_since(ran_out, ready) == ran_out
    assert due_since(ready + timedelta(seconds=1), ready) == ready + timedelta(seconds=1)


# (slots, ages of the runs in hand, lane seconds, jobs a pass starts)
LANE_VECTORS = [
    (4, [], 0, 4),  # no lane: every free slot
    (4, [1.0, 2.0], 0, 2),
    (4, [], 60, 1),  # a lane: one at a time enters
    (4, [59.9], 60, 0),  # the run in it has not held it its bound
    (4, [60.0], 60, 1),  # it has: the next goes beside it
    (4, [61.0, 1.0], 60, 0),  # the one that went beside it holds the lane now
    (4, [61.0, 70.0, 80.0], 60, 1),
    (4, [61.0, 70.0, 80.0, 90.0], 60, 0),  # no free slot
    (1, [], 60, 1),
    (40, [], 0, CLAIM_BATCH),
]


@pytest.mark.parametrize(("slots", "ages", "lane", "batch"), LANE_VECTORS)
def test_a_lane_lets_one_run_in_at_a_time_and_the_next_past_its_bound(
    slots: int, ages: list[float], lane: float, batch: int
) -> None:
    assert start_batch(slots, ages, lane) == batch


def test_the_lane_default_is_pinned() -> None:
    assert LANE_SECONDS_DEFAULT == 60
