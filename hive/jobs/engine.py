"""Run a claimed job (RULES 10): each step's handler, then the next step by the rule.

`run_claimed` runs one claimed job, on the thread a `hive.jobs.pool.JobPool` gives it.
The job runs step after step under its claim, and each move renews the claim. It goes
on until the job ends, parks on a wait, or a handler raises. A handler gets a
`StepContext` and answers a `hive.rules.jobs.Result`:

    def merge(ctx: StepContext) -> Result:
        sha = ctx.effect(f"merge:{base_sha}", lambda: merge_commit(...))
        return Result.MERGED

`ctx.effect(key, act)` journals the effect, acts, and marks it done. An effect done
before, by this process or one that was killed, returns its recorded result without
acting again. A handler that raises leaves the job as it is. Once the claim runs out
(CLAIM_TTL_SECONDS), this process or another claims it and runs its step again.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from enum import StrEnum
from typing import Any

from hive.rules.jobs import JobState, Result, ends_job, next_step
from hive.rules.waits import CLAIM_TTL_SECONDS, wait_problem
from hive.store import jobs
from hive.store.db import Db
from hive.store.jobs import Job

log = logging.getLogger("hive.jobs")


class LostClaim(Exception):
    """The job's claim was lost mid-step. Either it ran out and another process claimed
    the job, or the job was cancelled. The step must stop and act on nothing more."""


@dataclass(frozen=True)
class Parking:
    key: str | None
    wake_in_seconds: int | None
    payload: Mapping[str, Any] | None
    detail: str | None


class StepContext:
    """What a step's handler gets: the claimed job, the store, and the effects journal."""

    def __init__(self, db: Db, job: Job, ttl_seconds: float) -> None:
        self.db = db
        self.job = job
        self.detail: str | None = None
        self.parking: Parking | None = None
        self._ttl_seconds = ttl_seconds

    def effect(self, key: str, act: Callable[[], Any]) -> Any:
        """Run `act` once for this job under `key` and return its JSON result. The effect
        is journaled before and marked done after. A done effect returns its recorded
        result, and `act` is not called. Raises LostClaim when the job is no longer
        ours; nothing is acted on then."""
        begun = jobs.begin_effect(self.db, self.job, key)
        if begun is None:
            raise LostClaim(f"job {self.job.id}: claim lost before effect {key}")
        if begun.done:
            return begun.result
        result = act()
        jobs.finish_effect(self.db, self.job.id, key, result)
        return result

    def say(self, detail: str) -> None:
        """The sentence the job's row gets with this step's answer."""
        self.detail = detail

    def renew(self) -> None:
        """Keep the claim for another claim's length (a step longer than a claim calls it
        between parts). LostClaim when it was lost already."""
        renewed = jobs.renew(self.db, self.job, ttl_seconds=self._ttl_seconds)
        if renewed is None:
            raise LostClaim(f"job {self.job.id}: claim lost")
        self.job = renewed

    def held_while(self, act: Callable[[], Any], stop: Callable[[], None]) -> Any:
        """Run `act()` and return its result, renewing the claim every third of a claim
        while it runs. A check may run far longer than a claim. A renewal that finds the
        claim lost calls `stop()` from the renewing thread. LostClaim is then raised once
        `act` returns."""
        done = threading.Event()
        lost: list[LostClaim] = []

        def keep() -> None:
            while not done.wait(self._ttl_seconds / 3):
                try:
                    self.renew()
                except LostClaim as err:
                    lost.append(err)
                    stop()
                    return
                except Exception as err:  # the store away: the next renewal tries again
                    log.warning("job %s: claim not renewed: %s", self.job.id, err)

        keeper = threading.Thread(target=keep, name=f"job-{self.job.id}-claim", daemon=True)
        keeper.start()
        try:
            result = act()
        finally:
            done.set()
            keeper.join()
        if lost:
            raise lost[0]
        return result

    def park(
        self,
        *,
        key: str | None = None,
        wake_in_seconds: int | None = None,
        payload: Mapping[str, Any] | None = None,
        detail: str | None = None,
    ) -> Result:
        """Park the job and answer PARKED. The engine parks the job on a new wait with a
        key, a wake time, or both. It runs this step again when the wait resolves or
        expires. Raises ValueError, with the rule's sentence, for a malformed wait."""
        problem = wait_problem(key, wake_in_seconds)
        if problem is not None:
            raise ValueError(problem)
        self.parking = Parking(key, wake_in_seconds, payload, detail)
        return Result.PARKED


Handler = Callable[[StepContext], StrEnum]


@dataclass(frozen=True)
class RunResult:
    """What a run of jobs did; runs add up. `errors` counts handlers that raised; their
    jobs are left for a retry."""

    claimed: int = 0
    steps: int = 0
    finished: int = 0
    failed: int = 0
    parked: int = 0
    errors: int = 0
    lost: int = 0

    def __add__(self, other: RunResult) -> RunResult:
        return RunResult(*(getattr(self, f.name) + getattr(other, f.name) for f in fields(self)))


def _name(job: Job) -> str:
    return f"job {job.id} ({job.kind}, issue {job.issue})"


def _lost_before_run(db: Db, job: Job) -> str:
    """Why a run found its claim gone as it began, as the job's row says now. Either its
    thread started after the claim ran out and another claimant took the job, or the job
    was ended (cancelled) meanwhile."""
    now = jobs.get(db, job.id)
    if now is None:
        return "the job is gone"
    if now.state is not JobState.READY:
        return f"it was {now.state} before its run began"
    if now.epoch != job.epoch:
        return (
            f"its run began after its claim ran out, and {now.claimed_by or 'another'}"
            " claimed it again"
        )
    return "its claim was lost before its run began"


def run_claimed(
    db: Db,
    job: Job,
    handlers: Mapping[str, Handler],
    advance: Callable[[str, str], str | None] = next_step,
    ends: Callable[[str], bool] = ends_job,
    ttl_seconds: float = CLAIM_TTL_SECONDS,
) -> RunResult:
    """Run the claimed `job` as far as it goes (see the module), in this thread. A store
    error outside a handler raises. The job is then claimed again once its claim runs
    out."""
    steps = 0
    # a job's claim is renewed as its run starts: a run whose thread started late is not
    # run under a claim that ran out meanwhile
    renewed = jobs.renew(db, job, ttl_seconds=ttl_seconds)
    if renewed is None:
        log.warning("%s: not run: %s", _name(job), _lost_before_run(db, job))
        return RunResult(lost=1)
    job = renewed
    while True:
        handler = handlers.get(job.step)
        if handler is None:
            log.error("%s: no handler for step %s; left for a retry", _name(job), job.step)
            return RunResult(steps=steps, errors=1)
        ctx = StepContext(db, job, ttl_seconds)
        try:
            result = handler(ctx)
        except LostClaim as lost:
            log.warning("%s: step %s stopped: %s", _name(job), job.step, lost)
            return RunResult(steps=steps, lost=1)
        except Exception as err:  # any failure of a step is retried later
            log.warning(
                "%s: step %s raised %s: %s; retried once its claim runs out",
                _name(job),
                job.step,
                type(err).__name__,
                err,
            )
            return RunResult(steps=steps, errors=1)
        steps += 1
        job_now = ctx.job  # a renew moved the claim on, at the same epoch
        to = advance(job.step, str(result))
        if to is None:
            detail = f"step {job.step} answered {result}, which leads nowhere"
            log.error("%s: %s", _name(job), detail)
            ended = jobs.finish(db, job_now, JobState.FAILED, job.step, detail)
            return RunResult(steps=steps, failed=1 if ended else 0, lost=0 if ended else 1)
        detail = ctx.detail or f"{job.step}: {result}"
        if result == Result.PARKED:
            parking = ctx.parking
            if parking is None:
                log.error("%s: step %s answered parked without ctx.park", _name(job), job.step)
                return RunResult(steps=steps, errors=1)
            parked = jobs.park(
                db,
                job_now,
                key=parking.key,
                wake_in_seconds=parking.wake_in_seconds,
                payload=parking.payload,
                detail=parking.detail or detail,
            )
            return RunResult(steps=steps, parked=1 if parked else 0, lost=0 if parked else 1)
        if ends(to):
            ended = jobs.finish(db, job_now, JobState.DONE, to, detail)
            return RunResult(steps=steps, finished=1 if ended else 0, lost=0 if ended else 1)
        moved = jobs.advance(db, job_now, to, detail, ttl_seconds=ttl_seconds)
        if moved is None:
            log.warning("%s: claim lost after step %s", _name(job), job.step)
            return RunResult(steps=steps, lost=1)
        job = moved
