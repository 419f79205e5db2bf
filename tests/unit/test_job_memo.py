"""What a job's run learned is read by that run (claim) alone, and a few are kept."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

from hive.jobs.memo import RunMemo
from hive.rules.jobs import JobState
from hive.store.jobs import Job

NOW = datetime(2026, 12, 2, tzinfo=UTC)


def _job(id_: int, epoch: int = 1) -> Job:
    return Job(
        id=id_,
        kind="publish",
        issue=id_,
        attempt=1,
        step="checks",
        state=JobState.READY,
        args={},
        epoch=epoch,
        claimed_by="q",
        claim_due_at=None,
        wait_id=None,
        detail=None,
        created_at=NOW,
        updated_at=NOW,
        finished_at=None,
    )


def test_a_later_claim_never_reads_what_an_earlier_one_learned() -> None:
    memo: RunMemo[str] = RunMemo()
    job = _job(1, epoch=3)
    assert memo.get(job) is None
    memo.put(job, "base a")
    assert memo.get(replace(job, step="merge")) == "base a"  # the same run, a later step
    assert memo.get(replace(job, epoch=4)) is None  # claimed again: a new run
    memo.forget(job)
    assert memo.get(job) is None and len(memo) == 0


def test_the_oldest_job_goes_first_past_the_bound() -> None:
    memo: RunMemo[int] = RunMemo(size=2)
    for n in (1, 2, 3):
        memo.put(_job(n), n)
    assert len(memo) == 2
    assert memo.get(_job(1)) is None
    assert (memo.get(_job(2)), memo.get(_job(3))) == (2, 3)
    memo.put(_job(2, epoch=2), 20)  # put again: the newest, the older run's value replaced
    memo.put(_job(4), 4)
    assert memo.get(_job(3)) is None
    assert memo.get(_job(2, epoch=2)) == 20 and memo.get(_job(2)) is None
