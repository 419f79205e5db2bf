"""Jobs side by side: a job runner's slots (HIVE_PUBLISH_JOBS for publish jobs).

`JobPool.start_due()` claims as many due jobs as it may start now
(`hive.rules.job_slots.start_batch`). That is its free slots, or one at a time with a
lane. The store hands them oldest due first. Each runs on a thread of its own
(`engine.run_claimed`). So a job whose check hangs, or whose forge makes it wait, holds
up no other. With a lane, it holds up no other past the lane's bound, at the next pass.
A job's run ends when the job ended, parked or lost its claim, or a step raised. Its
slot is then free and `on_free()` is called. The job runner is told, and claims the
next due job at once. `take()` returns what the runs ended since the last take did.

What must stay one at a time is kept so by what it is done with.

- A job's claim (its epoch) fences it from every other thread and process.
- A push into the base is a compare-and-swap, so two pushes never lose one another.
  The loser merges again, and its checks run on the new merge. That is why pushes into
  one base go through the lane.
- Each step opens its own `Repo` on the clone (`own_repo`). Writers of one ref wait for
  each other's lock.
- The GitHub client holds every request of the process through a rate limit's pause.

`close()` starts nothing more. It is safe twice. The runs in hand go on, on daemon
threads, until their step ends or the publisher's close stops their checks. What they
leave is claimed again once its claim runs out, and its done effects are not repeated.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping

from hive.jobs.engine import Handler, RunResult, run_claimed
from hive.rules.job_slots import start_batch
from hive.rules.jobs import JobKind, ends_job, next_step
from hive.rules.waits import CLAIM_TTL_SECONDS
from hive.store import jobs
from hive.store.db import Db
from hive.store.jobs import Job

log = logging.getLogger("hive.jobs")


class JobPool:
    """Runs claimed jobs of one `kind` on up to `slots` threads at once. When
    `lane_seconds` is above 0 they go one at a time through a lane (see the module)."""

    def __init__(
        self,
        db: Db,
        holder: str,
        handlers: Mapping[str, Handler],
        *,
        slots: int,
        lane_seconds: float = 0.0,
        ttl_seconds: float = CLAIM_TTL_SECONDS,
        kind: str = JobKind.PUBLISH,
        on_free: Callable[[], None] = lambda: None,
        advance: Callable[[str, str], str | None] = next_step,
        ends: Callable[[str], bool] = ends_job,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if slots < 1:
            raise ValueError(f"a job pool needs at least one slot, not {slots}")
        self.db = db
        self.holder = holder
        self.handlers = handlers
        self.slots = slots
        self.lane_seconds = lane_seconds
        self.clock = clock
        self.ttl_seconds = ttl_seconds
        self.kind = kind
        self.on_free = on_free
        self.advance = advance
        self.ends = ends
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._running: dict[int, float] = {}  # job id -> when its run started
        self._ended = RunResult()
        self._closed = False

    def start_due(self) -> int:
        """Claim up to the free slots' worth of due jobs and start each on its thread.
        Returns how many started. A store error of the claim raises; nothing was then
        claimed."""
        with self._lock:
            if self._closed:
                return 0
            now = self.clock()
            ages = [now - started for started in self._running.values()]
            batch = start_batch(self.slots, ages, self.lane_seconds)
            running = list(self._running)
        if batch == 0:
            return 0
        started = 0
        for job in self._claim(batch, running):
            thread = threading.Thread(
                target=self._run, args=(job,), name=f"hive-job-{job.id}", daemon=True
            )
            with self._lock:
                closed = self._closed
                if not closed:
                    self._running[job.id] = self.clock()
                    self._ended += RunResult(claimed=1)
            if closed:
                self._give_back(job)
                continue
            thread.start()
            started += 1
        return started

    def take(self) -> RunResult:
        """What the runs that ended since the last take did (and the jobs claimed)."""
        with self._lock:
            ended, self._ended = self._ended, RunResult()
        return ended

    def running(self) -> int:
        with self._lock:
            return len(self._running)

    def wait_idle(self, timeout_seconds: float) -> bool:
        """Whether every run in hand ended within `timeout_seconds` (for tests and tools)."""
        with self._changed:
            return self._changed.wait_for(lambda: not self._running, timeout_seconds)

    def close(self) -> None:
        """Start no more runs. The ones in hand go on (see the module). Safe twice."""
        with self._lock:
            self._closed = True

    def _claim(self, batch: int, running: list[int]) -> list[Job]:
        # a job running here whose step outlasted its claim is not claimed again here:
        # its step goes on, and its next fenced write lands while no other Queen took it
        return jobs.claim(
            self.db,
            self.holder,
            kind=self.kind,
            batch=batch,
            ttl_seconds=self.ttl_seconds,
            running=running,
        )

    def _run(self, job: Job) -> None:
        try:
            result = run_claimed(
                self.db, job, self.handlers, self.advance, self.ends, self.ttl_seconds
            )
        except Exception as err:  # the store away mid-run: claimed again later
            log.warning(
                "job %s (issue %s): its run stopped: %s: %s; claimed again once its claim runs out",
                job.id,
                job.issue,
                type(err).__name__,
                err,
            )
            result = RunResult(errors=1)
        with self._changed:
            del self._running[job.id]
            self._ended += result
            self._changed.notify_all()
        try:
            self.on_free()
        except Exception as err:  # a tell to an actor that is gone: the poll claims
            log.debug("job %s: telling of its free slot failed: %s", job.id, err)

    def _give_back(self, job: Job) -> None:
        """Give a job claimed as the pool closed back to the store, due at once."""
        try:
            jobs.release(self.db, job)
        except Exception as err:  # its claim runs out instead
            log.warning("job %s: not given back (%s); claimed again later", job.id, err)
