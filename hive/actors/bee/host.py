"""The bee pool as the Queen, the claimer, the reaper and the drain see it.

The pool itself is a `supervisors.Pool` the tree makes (a bee is a temporary child, one
per order, at most one per slot); the tree attaches each pool it makes here, so a restart
of the runner supervisor is seen by everyone. A bee counts in the work registry from its
start until it ends; the host counts those, names their issues (the reapers spare them)
and refuses to start one once the drain began.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Protocol

from hive.actors.work import WorkItem, WorkRegistry
from supervisors import Pool, StartError, SupervisorStopped

log = logging.getLogger("hive.host")


class HostedBee(WorkItem, Protocol):
    issue: int


class BeeHost:
    def __init__(self, work: WorkRegistry) -> None:
        self._lock = threading.Lock()
        self._pool: Pool | None = None
        self.work = work
        self._watchers: list[Callable[[int], None]] = []

    def watch(self, counted: Callable[[int], None]) -> None:
        """Call `counted(bees running)` whenever a bee starts or ends here (the tree fits
        the store pool to it)."""
        self._watchers.append(counted)

    def _counted(self) -> None:
        running = self.running()
        for counted in self._watchers:
            counted(running)

    def attach(self, pool: Pool) -> Pool:
        """The tree's pool factory passes each new pool through here."""
        with self._lock:
            self._pool = pool
        return pool

    @property
    def ready(self) -> bool:
        """A pool is attached and running, and the drain has not begun."""
        with self._lock:
            pool = self._pool
        return pool is not None and pool.alive and not self.work.draining

    def start(self, bee: HostedBee) -> bool:
        """Start `bee` in the pool (`BeeActor.start(bee, leave)`; the bee calls `leave`
        when it ends); False when no pool runs here or the drain began. A bee counts from
        here until it ends."""
        with self._lock:
            pool = self._pool
        admitted = None if pool is None else self.work.admit(bee)
        if pool is None or admitted is None:
            return False
        removed = admitted

        def leave() -> None:
            removed()
            self._counted()

        self._counted()
        try:
            pool.start_child(bee, leave)
        except (StartError, SupervisorStopped) as err:
            log.warning("could not start a bee: %s", err, extra={"issue": bee.issue})
            leave()
            return False
        return True

    def running(self) -> int:
        return len(self.work.bees())

    def issues(self) -> frozenset[int]:
        """The issues whose bee runs in this process (a reaper never touches them)."""
        return frozenset(
            issue for bee in self.work.bees() if (issue := getattr(bee, "issue", None)) is not None
        )
