"""Jobs side by side on a real PostgreSQL (`hive.jobs.pool`): a pool runs at most its
slots at once and claims no more than it can start, the longest due first; a run that
ends frees its slot and says so; a closed pool starts nothing."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from hive.jobs.engine import Handler, RunResult, StepContext
from hive.jobs.pool import JobPool
from hive.rules.jobs import JobKind, JobState, Result, Step
from hive.store import jobs
from hive.store.pool import make_pool

PUBLISH = JobKind.PUBLISH
WAIT_SECONDS = 30.0


@pytest.fixture
def db(hive_db_url: str) -> Iterator[Any]:
    pool = make_pool(hive_db_url, max_size=4, name="t-job-pool")
    yield pool
    pool.close()


class Held:
    """CHECKS handlers that hold until let go, noting which jobs run at once."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.running: set[int] = set()
        self.most = 0
        self.started: list[int] = []
        self.go: dict[int, threading.Event] = {}
        self.came = threading.Condition(self.lock)

    def handlers(self) -> dict[str, Handler]:
        def checks(ctx: StepContext) -> Result:
            with self.came:
                self.running.add(ctx.job.id)
                self.most = max(self.most, len(self.running))
                self.started.append(ctx.job.id)
                go = self.go.setdefault(ctx.job.id, threading.Event())
                self.came.notify_all()
            go.wait(WAIT_SECONDS)
            with self.lock:
                self.running.discard(ctx.job.id)
            return Result.RED

        return {str(Step.CHECKS): checks}

    def let_go(self, job: int) -> None:
        with self.lock:
            self.go.setdefault(job, threading.Event()).set()

    def wait_started(self, count: int) -> list[int]:
        with self.came:
            assert self.came.wait_for(lambda: len(self.started) >= count, WAIT_SECONDS)
            return list(self.started)


def test_a_pool_runs_at_most_its_slots_and_claims_only_what_it_can_start(db: Any) -> None:
    made = [jobs.create(db, PUBLISH, n, Step.CHECKS).job.id for n in range(1, 6)]
    held = Held()
    freed: list[int] = []
    free = threading.Event()

    def on_free() -> None:
        freed.append(1)
        free.set()

    pool = JobPool(db, "q", held.handlers(), slots=2, on_free=on_free)
    assert pool.start_due() == 2
    assert sorted(held.wait_started(2)) == made[:2]  # the oldest due first, side by side
    claimed = [j for j in (jobs.get(db, i) for i in made) if j and j.claimed_by == "q"]
    assert [j.id for j in claimed] == made[:2]  # the other three are left to any Queen
    assert pool.start_due() == 0 and pool.running() == 2
    held.let_go(made[0])
    assert free.wait(WAIT_SECONDS)  # the run ended and said so
    assert freed == [1] and pool.running() == 1
    assert pool.start_due() == 1
    assert sorted(held.wait_started(3)) == made[:3]
    for job in made:
        held.let_go(job)
    while pool.start_due() or pool.running():
        pool.wait_idle(WAIT_SECONDS)
    assert held.most == 2 and len(freed) == 5
    ended = [jobs.get(db, i) for i in made]
    assert all(j is not None and j.step == Step.SENT_BACK for j in ended)
    assert pool.take() == RunResult(claimed=5, steps=5, finished=5)
    assert pool.take() == RunResult()


def test_the_longest_due_job_is_claimed_first(db: Any, hive_db_url: str) -> None:
    fresh = jobs.create(db, PUBLISH, 1, Step.CHECKS).job
    dead = jobs.create(db, PUBLISH, 2, Step.CHECKS).job
    (claimed,) = jobs.claim(db, "dead-queen", kind=PUBLISH, batch=1)
    assert claimed.id == fresh.id
    with psycopg.connect(hive_db_url, autocommit=True) as conn:
        # the first job's Queen died ten minutes ago; the second became ready a moment ago
        conn.execute(
            "UPDATE hive.queen_job SET claim_due_at = now() - interval '10 minutes' WHERE id = %s",
            (fresh.id,),
        )
    later = jobs.create(db, PUBLISH, 3, Step.CHECKS).job
    order = [j.id for _ in range(3) for j in jobs.claim(db, "q", kind=PUBLISH, batch=1)]
    assert order == [fresh.id, dead.id, later.id]


def test_a_fresh_job_does_not_starve_one_whose_claim_ran_out(db: Any, hive_db_url: str) -> None:
    stuck = jobs.create(db, PUBLISH, 1, Step.CHECKS).job
    jobs.claim(db, "dead-queen", kind=PUBLISH, batch=1)
    with psycopg.connect(hive_db_url, autocommit=True) as conn:
        conn.execute("UPDATE hive.queen_job SET claim_due_at = now() - interval '1 minute'")
    jobs.create(db, PUBLISH, 2, Step.CHECKS)  # new work keeps coming
    (first,) = jobs.claim(db, "q", kind=PUBLISH, batch=1)
    assert first.id == stuck.id


def test_a_job_whose_step_outlasts_its_claim_is_not_claimed_again_by_its_own_pool(
    db: Any, hive_db_url: str
) -> None:
    """A step longer than its claim (a forge's answers held past the client's timeout,
    a rate limit waited out) is not run a second time beside itself: the pool claimed it
    again once its claim ran out, and two threads ran one job's step at once."""
    job = jobs.create(db, PUBLISH, 1, Step.CHECKS).job
    held = Held()
    pool = JobPool(db, "q", held.handlers(), slots=2)
    assert pool.start_due() == 1
    held.wait_started(1)
    with psycopg.connect(hive_db_url, autocommit=True) as conn:  # its claim runs out
        conn.execute("UPDATE hive.queen_job SET claim_due_at = now() - interval '1 s'")
    assert pool.start_due() == 0
    held.let_go(job.id)
    assert pool.wait_idle(WAIT_SECONDS)
    assert held.started == [job.id] and held.most == 1
    ended = jobs.get(db, job.id)
    assert ended is not None and ended.step == Step.SENT_BACK  # its write landed
    assert pool.take() == RunResult(claimed=1, steps=1, finished=1)


def test_a_run_that_fails_outside_its_steps_frees_its_slot(db: Any) -> None:
    job = jobs.create(db, PUBLISH, 1, Step.CHECKS).job

    def nowhere(step: str, result: str) -> str | None:
        raise psycopg.OperationalError("the server closed the connection")

    freed: list[int] = []
    pool = JobPool(
        db,
        "q",
        {str(Step.CHECKS): lambda ctx: Result.RED},
        slots=1,
        advance=nowhere,
        on_free=lambda: freed.append(1),
    )
    assert pool.start_due() == 1
    assert pool.wait_idle(WAIT_SECONDS)
    assert pool.take() == RunResult(claimed=1, errors=1)
    assert freed == [1] and pool.running() == 0
    left = jobs.get(db, job.id)
    assert left is not None and (left.state, left.step) == (JobState.READY, Step.CHECKS)


def test_a_closed_pool_starts_nothing_and_leaves_its_jobs_to_the_store(db: Any) -> None:
    job = jobs.create(db, PUBLISH, 1, Step.CHECKS).job
    pool = JobPool(db, "q", Held().handlers(), slots=2)
    pool.close()
    pool.close()  # safe twice
    assert pool.start_due() == 0
    left = jobs.get(db, job.id)
    assert left is not None and left.claimed_by is None and left.state == JobState.READY
    assert left.epoch == job.epoch  # not even claimed


def test_jobs_claimed_as_the_pool_closes_are_given_back_due_at_once(db: Any) -> None:
    made = [jobs.create(db, PUBLISH, n, Step.CHECKS).job.id for n in (1, 2)]

    class ClosedMeanwhile(JobPool):
        def _claim(self, batch: int, running: list[int]) -> list[jobs.Job]:
            claimed = super()._claim(batch, running)
            self.close()  # the drain began while the claim was on its way
            return claimed

    pool = ClosedMeanwhile(db, "q", Held().handlers(), slots=2)
    assert pool.start_due() == 0 and pool.running() == 0
    for job_id in made:
        left = jobs.get(db, job_id)
        assert left is not None and left.state == JobState.READY
        assert (left.claimed_by, left.claim_due_at) == (None, None)  # any Queen's, now


def test_through_a_lane_one_run_at_a_time_and_the_next_beside_one_past_its_bound(
    db: Any,
) -> None:
    made = [jobs.create(db, PUBLISH, n, Step.CHECKS).job.id for n in (1, 2, 3)]
    held = Held()
    now = [1000.0]
    pool = JobPool(db, "q", held.handlers(), slots=4, lane_seconds=60, clock=lambda: now[0])
    assert pool.start_due() == 1  # one enters the lane
    assert held.wait_started(1) == made[:1]
    now[0] += 59.0
    assert pool.start_due() == 0  # it has not held the lane its bound
    now[0] += 1.0
    assert pool.start_due() == 1  # it has (a hung check): the next goes beside it
    assert sorted(held.wait_started(2)) == made[:2]
    assert pool.start_due() == 0  # the one beside it holds the lane now
    for job in made:
        held.let_go(job)
    while pool.start_due() or pool.running():
        pool.wait_idle(WAIT_SECONDS)
    assert held.most == 2
    assert pool.take().finished == 3


def test_a_pool_needs_a_slot() -> None:
    with pytest.raises(ValueError, match="at least one slot"):
        JobPool(None, "q", {}, slots=0)  # type: ignore[arg-type]
