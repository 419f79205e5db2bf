"""The job runner (RULES 9 and 10, DESIGN 3). It runs durable jobs and the waits they
park on, in the Queen's process.

A pass does three things in order. It expires the waits whose time came, which wakes the
jobs parked on them. It makes the publish job of accepted work that lost it
(LOST_JOB_SECONDS); that happens when the verdict landed and the process or the store
went before the job was written. Then it claims the publish jobs that are due and runs
each as far as it goes (`hive.jobs.engine`).

A pass runs every `poll_seconds`, and at once when told `JobsReady`, when the reviewer
accepted work here. The drain leaves jobs and waits to the store. A job stopped mid-step
is claimed again once its claim runs out, and its done effects are not repeated.
`close()` stops the checks running now.

Up to `slots` jobs (HIVE_PUBLISH_JOBS) run at once, each on a thread of its own
(`hive.jobs.pool`). A pass starts the due ones that fit and returns. A run that ends
frees its slot and tells JOBS `JobSlotFree`, and the next pass claims at once. When the
runs push into one base (HIVE_PUBLISH=push), they go through a lane one at a time. The
next run starts beside one only once that one held the lane `lane_seconds`, at the pass
after. A pass's line is what the runs ended since the last pass did.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from hive.actors.loop import LoopActor
from hive.actors.messages import JOBS, JOBS_WAKES, JobSlotFree
from hive.git.repo import Checkout
from hive.jobs import engine
from hive.jobs.forge_steps import ForgeSteps
from hive.jobs.pool import JobPool
from hive.jobs.publish import PublishConfig, Publisher
from hive.metrics import HiveMetrics
from hive.rules.job_slots import PUBLISH_JOBS_DEFAULT
from hive.rules.jobs import LOST_JOB_SECONDS, JobKind, Step
from hive.rules.modes import PublishMode
from hive.rules.waits import CLAIM_TTL_SECONDS, SCHEDULER_POLL_SECONDS
from hive.store import jobs, publish, waits
from hive.store.db import Db
from supervisors import Registry

log = logging.getLogger("hive.jobs")

LOST_JOB = "accepted, and its publish job was lost: made now"


@dataclass(frozen=True)
class JobRunnerConfig:
    holder: str
    poll_seconds: float = float(SCHEDULER_POLL_SECONDS)
    claim_seconds: float = float(CLAIM_TTL_SECONDS)
    # HIVE_PUBLISH: off leaves accepted work for export, no job
    publish: PublishMode = PublishMode.OFF
    slots: int = PUBLISH_JOBS_DEFAULT  # HIVE_PUBLISH_JOBS: jobs run side by side
    # HIVE_PUBLISH_LANE_SECONDS where pushes go into one base (push); 0: no lane
    lane_seconds: float = 0.0


@dataclass(frozen=True)
class JobPass:
    expired: int
    ran: engine.RunResult

    def __bool__(self) -> bool:
        return bool(self.expired or self.ran.steps or self.ran.errors)

    def __str__(self) -> str:
        r = self.ran
        return (
            f"jobs: {r.steps} steps, {r.finished} ended, {r.parked} parked, {r.errors} "
            f"to retry; {self.expired} waits expired"
        )


class JobRunner:
    """`on_free` is called from a job's thread as its run ends (see the module)."""

    def __init__(
        self,
        db: Db,
        config: JobRunnerConfig,
        publisher: Publisher,
        on_free: Callable[[], None] = lambda: None,
    ) -> None:
        self.db = db
        self.config = config
        self.publisher = publisher
        self.pool = JobPool(
            db,
            config.holder,
            publisher.handlers(),
            slots=config.slots,
            lane_seconds=config.lane_seconds,
            ttl_seconds=config.claim_seconds,
            on_free=on_free,
        )

    def run_once(self) -> JobPass:
        db = self.db
        expired = waits.expire_due(db)
        if self.config.publish != PublishMode.OFF:
            for issue, attempt in publish.accepted_without_job(db, LOST_JOB_SECONDS):
                jobs.create(
                    db, JobKind.PUBLISH, issue, Step.CHECKS, attempt=attempt, detail=LOST_JOB
                )
                log.warning("%s", LOST_JOB, extra={"issue": issue})
        self.pool.start_due()
        return JobPass(len(expired), self.pool.take())

    def close(self) -> None:
        """Start no more jobs and stop the checks running now (safe twice)."""
        self.pool.close()
        self.publisher.close()


class JobRunnerActor(LoopActor):
    """The job runner's actor, registered as JOBS (see the module)."""

    def __init__(
        self,
        db: Db,
        checkout: Checkout,
        metrics: HiveMetrics,
        names: Registry,
        config: JobRunnerConfig,
        publish: PublishConfig,
        on_merged: Callable[[int, str], None],
        forge: ForgeSteps | None = None,
    ) -> None:
        publisher = Publisher(db, checkout, metrics, publish, on_merged, forge)
        super().__init__(
            "jobs",
            JobRunner(db, config, publisher, lambda: _tell_free(names)),
            config.poll_seconds,
            registry=names,
            known_as=JOBS,
            wakes_on=JOBS_WAKES,
        )


def _tell_free(names: Registry) -> None:
    """Tell the runner that a job's slot is free. It claims the next due job now, not at
    its poll."""
    names.tell(JOBS, JobSlotFree())
