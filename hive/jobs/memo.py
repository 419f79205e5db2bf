"""What a job's run learned, for the later steps of the same run.

A run is one claim of a job: its `epoch` (the fence) is bumped by every claim, so what
an earlier claim learned (before a park, a restart, or another process's claim) is never
read by a later one. At most `size` jobs are remembered; the oldest goes first.
"""

from __future__ import annotations

import threading
from typing import Generic, TypeVar

from hive.store.jobs import Job

T = TypeVar("T")

RUNS_REMEMBERED = 64


class RunMemo(Generic[T]):
    """One value per job, good for the run (claim) that put it."""

    def __init__(self, size: int = RUNS_REMEMBERED) -> None:
        self._size = size
        self._lock = threading.Lock()
        self._values: dict[int, tuple[int, T]] = {}

    def get(self, job: Job) -> T | None:
        """The value this run of `job` put, or None."""
        with self._lock:
            held = self._values.get(job.id)
        if held is None or held[0] != job.epoch:
            return None
        return held[1]

    def put(self, job: Job, value: T) -> None:
        with self._lock:
            self._values.pop(job.id, None)
            while len(self._values) >= self._size:
                del self._values[next(iter(self._values))]
            self._values[job.id] = (job.epoch, value)

    def forget(self, job: Job) -> None:
        with self._lock:
            self._values.pop(job.id, None)

    def __len__(self) -> int:
        with self._lock:
            return len(self._values)
