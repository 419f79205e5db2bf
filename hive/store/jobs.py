"""Durable jobs, in `queen_job` and `queen_effect` (RULES 10).

A job is a row of named steps, claimed like a wait. `queen_effect` is the journal that
keeps a step's effects from being done twice.

A claim bumps the job's epoch. Every later write of the claimant names that epoch and
lands only while it still holds. A function that returns None for such a write says the
claim was lost. Either another process claimed the job after this claim ran out, or the
job was cancelled or ended.

An effect is journaled (`begin_effect`) before it is acted on, and marked done
(`finish_effect`) after. A process stopped between the two does it again. A process
stopped after never does.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from psycopg.types.json import Jsonb

from hive.rules.jobs import JobState
from hive.rules.waits import CLAIM_BATCH, CLAIM_TTL_SECONDS, wait_problem
from hive.store.db import Db, dicts, pick

# create_job asks again this many times when the live job it collided with ended meanwhile
_CREATE_TRIES = 3


@dataclass(frozen=True)
class Job:
    id: int
    kind: str
    issue: int | None
    attempt: int | None
    step: str
    state: JobState
    args: dict[str, Any]
    epoch: int  # the fence: a claim bumps it, the claimant's writes name it
    claimed_by: str | None
    claim_due_at: datetime | None  # another process may claim it from then (NULL: now)
    wait_id: int | None  # the wait it is (or last was) parked on
    detail: str | None
    created_at: datetime
    updated_at: datetime
    finished_at: datetime | None


@dataclass(frozen=True)
class Created:
    job: Job
    created: bool  # False: the live job of that kind for that issue already existed


@dataclass(frozen=True)
class Effect:
    job: int
    effect_key: str
    done: bool
    result: Any  # what finish_effect recorded (JSON), None until done
    created_at: datetime
    done_at: datetime | None


def _job(row: Mapping[str, Any]) -> Job:
    return pick(Job, {**row, "state": JobState(row["state"])})


def _first(rows: list[dict[str, Any]]) -> Job | None:
    return _job(rows[0]) if rows else None


def _fence(job: Job) -> dict[str, Any]:
    return {"job": job.id, "epoch": job.epoch}


def create(
    db: Db,
    kind: str,
    issue: int | None,
    step: str,
    *,
    attempt: int | None = None,
    args: Mapping[str, Any] | None = None,
    detail: str | None = None,
) -> Created:
    """Make a ready job at `step` and NOTIFY hive_jobs. There is at most one live job of
    a kind per issue, so when `issue` has a live job of `kind`, that one comes back."""
    params = {
        "kind": kind,
        "issue": issue,
        "attempt": attempt,
        "step": step,
        "args": Jsonb(dict(args or {})),
        "detail": detail,
    }
    for _ in range(_CREATE_TRIES):
        rows = dicts(db, "create_job", params)
        if rows:
            return Created(_job(rows[0]), bool(rows[0]["created"]))
    raise RuntimeError(f"job {kind} of issue {issue}: neither created nor found live")


def claim(
    db: Db,
    holder: str,
    *,
    kind: str,
    batch: int = CLAIM_BATCH,
    ttl_seconds: float = CLAIM_TTL_SECONDS,
    running: Collection[int] = (),
) -> list[Job]:
    """Claim up to `batch` ready jobs of `kind` that are due. A job is due when it was
    never claimed or its claim ran out. Rows another claim holds locked are skipped. So
    are the jobs the claimant is still `running`: a step that outlasted its claim goes
    on, and claiming its own job would run it twice. Each job comes back at its new
    epoch."""
    params = {
        "holder": holder,
        "kind": kind,
        "batch": batch,
        "ttl_seconds": ttl_seconds,
        "running_jobs": list(running),
    }
    return [_job(row) for row in dicts(db, "claim_jobs", params)]


def advance(
    db: Db, job: Job, step: str, detail: str | None, *, ttl_seconds: float = CLAIM_TTL_SECONDS
) -> Job | None:
    """Move the claimed `job` to `step` and renew its claim. None: the claim was lost."""
    params = {**_fence(job), "step": step, "detail": detail, "ttl_seconds": ttl_seconds}
    return _first(dicts(db, "advance_job", params))


def renew(db: Db, job: Job, *, ttl_seconds: float = CLAIM_TTL_SECONDS) -> Job | None:
    """Move the claim of `job` `ttl_seconds` ahead. A step longer than a claim calls it.
    None: the claim was lost."""
    return _first(dicts(db, "renew_job", {**_fence(job), "ttl_seconds": ttl_seconds}))


def release(db: Db, job: Job) -> Job | None:
    """Give the claimed `job` back, due at once, and NOTIFY hive_jobs. None: the claim was
    lost."""
    return _first(dicts(db, "release_job", _fence(job)))


def finish(db: Db, job: Job, state: JobState, step: str, detail: str | None) -> Job | None:
    """End the claimed `job` as done, failed or cancelled, at `step`. None: the claim was
    lost. Raises ValueError for a state that does not end a job."""
    if state not in (JobState.DONE, JobState.FAILED, JobState.CANCELLED):
        raise ValueError(f"{state} does not end a job")
    params = {**_fence(job), "job_state": str(state), "step": step, "detail": detail}
    return _first(dicts(db, "finish_job", params))


def park(
    db: Db,
    job: Job,
    *,
    key: str | None = None,
    wake_in_seconds: int | None = None,
    payload: Mapping[str, Any] | None = None,
    detail: str | None = None,
) -> Job | None:
    """Park the claimed `job` on a new wait owned by `job:<id>`. The wait has a key, a
    wake time, or both (RULES 9). The job is ready again when that wait resolves or
    expires. None: the claim was lost and no wait was made. Raises ValueError, with the
    rule's sentence, for a malformed wait."""
    problem = wait_problem(key, wake_in_seconds)
    if problem is not None:
        raise ValueError(problem)
    params = {
        **_fence(job),
        "wait_key": key,
        "wake_in_seconds": wake_in_seconds,
        "payload": Jsonb(dict(payload)) if payload is not None else None,
        "detail": detail,
    }
    return _first(dicts(db, "park_job", params))


def unpark(db: Db, wait_id: int | None = None) -> list[Job]:
    """Make ready the jobs parked on `wait_id` (or on any wait, when None) once it
    resolved or expired. Resolving or expiring a wait already does this in the same
    statement; this is the repair sweep."""
    return [_job(row) for row in dicts(db, "unpark_jobs", {"wait_id": wait_id})]


def cancel(db: Db, issue: int, detail: str, kind: str | None = None) -> list[Job]:
    """Cancel the live jobs of `issue` (of `kind`, or every kind) and the waits they are
    parked on. The holder of a claim writes nothing more (its fenced writes need a ready
    job)."""
    rows = dicts(db, "cancel_jobs", {"issue": issue, "kind": kind, "detail": detail})
    return [_job(row) for row in rows]


def get(db: Db, job_id: int) -> Job | None:
    return _first(dicts(db, "get_job", {"job": job_id}))


def live(db: Db, kind: str, issue: int) -> Job | None:
    """The ready or parked job of `kind` for `issue`, if any."""
    return _first(dicts(db, "live_job", {"kind": kind, "issue": issue}))


def due_in_seconds(db: Db, kind: str) -> float | None:
    """Seconds until the nearest ready job of `kind` may be claimed, for a runner's poll.
    Zero or less means now. None means there is no ready job."""
    rows = dicts(db, "job_due_in_seconds", {"kind": kind})
    value = rows[0]["due_in_seconds"] if rows else None
    return None if value is None else float(value)


def begin_effect(db: Db, job: Job, key: str) -> Effect | None:
    """Journal effect `key` of the claimed `job` before acting on it, and return its row.
    A new row is not done, so act. A row journaled before and done means skip the act
    and use its `result`. A row journaled before and not done means an earlier run
    stopped mid-act, so act again. None: the claim was lost, so do not act."""
    rows = dicts(db, "begin_effect", {**_fence(job), "effect_key": key})
    return pick(Effect, rows[0]) if rows else None


def finish_effect(db: Db, job_id: int, key: str, result: Any) -> Effect | None:
    """Mark effect `key` done with its JSON `result`, once the act is over. It is not
    fenced, because it records what was done. None: it was never begun, or was already
    done."""
    params = {"job": job_id, "effect_key": key, "result": Jsonb(result)}
    rows = dicts(db, "finish_effect", params)
    return pick(Effect, rows[0]) if rows else None


def effects(db: Db, job_id: int) -> list[Effect]:
    """The journal of a job, oldest first."""
    return [pick(Effect, row) for row in dicts(db, "job_effects", {"job": job_id})]
