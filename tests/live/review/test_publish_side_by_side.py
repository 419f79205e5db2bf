"""Publish jobs side by side on a real PostgreSQL and real git: a job whose check hangs
holds no other job's merge (issue 27: one job runner running the jobs one after another
held every accepted issue behind a check of 50-60 s, and a 60-issue GitHub chaos run
broke the state-bound invariant)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
import pytest

from hive.actors.jobrunner import JobRunner, JobRunnerActor, JobRunnerConfig
from hive.jobs.publish import PublishConfig, Publisher
from hive.metrics import HiveMetrics
from hive.rules.jobs import JobKind, JobState, Step
from hive.store import jobs
from hive.swarm import wait_for
from hive.testing import git
from supervisors import Registry
from tests.live.review.conftest import Finished

pytestmark = pytest.mark.live

# the other job's whole publish, on a loaded machine; the hung check runs far longer
OTHER_MERGED_WITHIN_SECONDS = 120.0
HANGS = "if [ -f docs/hang.md ]; then sleep 900; fi"


def _accept(hive_db_url: str, *issues: int) -> None:
    with psycopg.connect(hive_db_url, autocommit=True) as conn:
        conn.execute(
            "UPDATE hive.queen_dispatch SET review_state = 'accept', reviewed_at = now()"
            " WHERE issue = ANY(%s)",
            (list(issues),),
        )


def _two_jobs(
    db: Any, finished_work: Callable[..., Finished], hive_db_url: str, first: dict[str, str]
) -> tuple[Any, Any]:
    """Issue 1 (with the files `first`) and issue 2 (docs/b.md) finished and accepted,
    each with a publish job at its checks; issue 1's is due first."""
    finished_work(1, first, ["x"])
    finished_work(2, {"docs/b.md": "b\n"}, ["x"])
    _accept(hive_db_url, 1, 2)
    one = jobs.create(db, JobKind.PUBLISH, 1, Step.CHECKS, attempt=1).job
    two = jobs.create(db, JobKind.PUBLISH, 2, Step.CHECKS, attempt=1).job
    return one, two


def _merged(db: Any, job_id: int) -> bool:
    job = jobs.get(db, job_id)
    return job is not None and job.step == Step.DONE


def _started(db: Any, queen_checkout: Any, config: JobRunnerConfig, publish: PublishConfig) -> Any:
    return JobRunnerActor.start(
        db, queen_checkout, HiveMetrics(), Registry(), config, publish, lambda n, sha: None
    )


def test_a_job_whose_check_hangs_does_not_hold_another_jobs_merge(
    db: Any,
    finished_work: Callable[..., Finished],
    queen_checkout: Any,
    hive_repo: Path,
    hive_db_url: str,
) -> None:
    slow, quick = _two_jobs(db, finished_work, hive_db_url, {"docs/hang.md": "slow\n"})
    config = PublishConfig(
        repo_url=str(hive_repo), checks=(("ci", HANGS),), checks_timeout_seconds=1800
    )
    publisher = Publisher(db, queen_checkout, HiveMetrics(), config)
    runner = JobRunner(db, JobRunnerConfig("test-queen", publish="push"), publisher)
    passing = threading.Thread(target=runner.run_once, daemon=True)
    passing.start()
    try:
        wait_for(
            lambda: _merged(db, quick.id),
            OTHER_MERGED_WITHIN_SECONDS,
            "the other job merged beside the hung check",
        )
        assert git("show", "main:docs/b.md", cwd=hive_repo) == "b"
        held = jobs.get(db, slow.id)
        assert held is not None and (held.step, held.claimed_by) == (Step.CHECKS, "test-queen")
    finally:
        runner.close()  # the drain: the hung check is stopped, its job left to the store
        passing.join(30)
    assert runner.pool.wait_idle(30)
    left = jobs.get(db, slow.id)
    assert left is not None and (left.state, left.step) == (JobState.READY, Step.CHECKS)
    assert "docs/hang.md" not in git("ls-tree", "-r", "--name-only", "main", cwd=hive_repo)
    with psycopg.connect(hive_db_url, autocommit=True) as conn:  # its claim runs out
        conn.execute("UPDATE hive.queen_job SET claim_due_at = now() - interval '1 s'")
    runner.run_once()  # a pass after the close starts nothing: the job is another Queen's
    again = jobs.get(db, slow.id)
    assert again is not None and again.epoch == left.epoch


def test_a_job_that_ends_frees_its_slot_for_the_next_at_once_not_at_the_poll(
    db: Any,
    finished_work: Callable[..., Finished],
    queen_checkout: Any,
    hive_repo: Path,
    hive_db_url: str,
) -> None:
    made = _two_jobs(db, finished_work, hive_db_url, {"docs/a.md": "a\n"})
    config = JobRunnerConfig("test-queen", poll_seconds=3600, publish="push", slots=1)
    publish = PublishConfig(repo_url=str(hive_repo), checks=(("ok", "true"),))
    ref = _started(db, queen_checkout, config, publish)
    try:

        def both_merged() -> bool:
            return all(_merged(db, job.id) for job in made)

        # one slot: the second job starts when the first one's run tells JOBS its slot
        # is free, not at the next poll an hour away
        wait_for(both_merged, OTHER_MERGED_WITHIN_SECONDS * 2, "both jobs merged")
    finally:
        ref.stop()
    assert git("show", "main:docs/b.md", cwd=hive_repo) == "b"


def test_through_the_lane_a_hung_check_holds_the_next_merge_only_for_the_lanes_bound(
    db: Any,
    finished_work: Callable[..., Finished],
    queen_checkout: Any,
    hive_repo: Path,
    hive_db_url: str,
) -> None:
    # issue 1's job enters the lane first
    slow, quick = _two_jobs(db, finished_work, hive_db_url, {"docs/hang.md": "slow\n"})
    config = JobRunnerConfig("test-queen", poll_seconds=1, publish="push", lane_seconds=6)
    publish = PublishConfig(repo_url=str(hive_repo), checks=(("ci", HANGS),))
    ref = _started(db, queen_checkout, config, publish)
    claimed: dict[int, float] = {}
    try:

        def merged() -> bool:
            for job in (jobs.get(db, slow.id), jobs.get(db, quick.id)):
                if job is not None and job.claimed_by is not None:
                    claimed.setdefault(job.id, time.monotonic())
            return _merged(db, quick.id)

        wait_for(merged, OTHER_MERGED_WITHIN_SECONDS, "the other job merged past the held lane")
        held = jobs.get(db, slow.id)
        assert held is not None and held.step == Step.CHECKS  # its check still hangs
    finally:
        ref.stop()
    assert git("show", "main:docs/b.md", cwd=hive_repo) == "b"
    # the quick job entered the lane once the slow one had held it its bound, not beside it
    assert claimed[quick.id] - claimed[slow.id] >= config.lane_seconds - 0.5
