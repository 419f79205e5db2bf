"""The tests' pass over the jobs: the next due job claimed and run as far as it goes by
a one-slot `JobPool`, the way the job runner runs jobs, and waited for. No pytest import:
the engine tests' spawned processes use it too."""

from __future__ import annotations

from collections.abc import Mapping

from hive.jobs.engine import Handler, RunResult
from hive.jobs.pool import JobPool
from hive.rules.waits import CLAIM_TTL_SECONDS
from hive.store.db import Db

# a publish job's whole run (checks, merge, push) on a loaded machine
RUN_MAX_SECONDS = 300.0


def run_one_job(
    db: Db,
    holder: str,
    handlers: Mapping[str, Handler],
    *,
    ttl_seconds: float = CLAIM_TTL_SECONDS,
) -> RunResult:
    """Claim the next due job as `holder`, run it on the pool's thread until its run ends,
    and say what it did (`claimed` 0 when none was due)."""
    pool = JobPool(db, holder, handlers, slots=1, ttl_seconds=ttl_seconds)
    try:
        if pool.start_due() and not pool.wait_idle(RUN_MAX_SECONDS):
            raise TimeoutError(f"a job's run did not end within {RUN_MAX_SECONDS:g} s")
        return pool.take()
    finally:
        pool.close()
