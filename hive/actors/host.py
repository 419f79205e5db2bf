"""The bee pool as the Queen, the claimer, the reaper and the drain see it.

The pool itself is a `supervisors.Pool` the tree makes (a bee is a temporary child, one
per order, at most one per slot); the tree attaches each pool it makes here, so a restart
of the runner supervisor is seen by everyone. The host counts the bees that have not
ended, names their issues (the reapers spare them) and refuses to start one once the
drain began.
"""

from __future__ import annotations

import logging
import threading
from typing import Protocol

from supervisors import Pool, StartError, SupervisorStopped

log = logging.getLogger("hive.host")


class HostedBee(Protocol):
    issue: int

    @property
    def ended(self) -> bool: ...


class BeeHost:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pool: Pool | None = None
        self._bees: dict[int, HostedBee] = {}
        self._closed = False

    def attach(self, pool: Pool) -> Pool:
        """The tree's pool factory passes each new pool through here."""
        with self._lock:
            self._pool = pool
        return pool

    def close(self) -> None:
        """No bee starts here any more (the drain began)."""
        with self._lock:
            self._closed = True

    @property
    def ready(self) -> bool:
        """A pool is attached and running, and the drain has not begun."""
        with self._lock:
            return self._pool is not None and self._pool.alive and not self._closed

    def start(self, bee: HostedBee) -> bool:
        """Start `bee` in the pool (`BeeActor.start(bee)`); False when no pool runs here or
        the drain began. A bee counts from here until it ends."""
        with self._lock:
            pool = self._pool
            if pool is None or self._closed:
                return False
            self._bees[id(bee)] = bee
        try:
            pool.start_child(bee)
        except (StartError, SupervisorStopped) as err:
            log.warning("could not start a bee: %s", err, extra={"issue": bee.issue})
            self.forget(bee)
            return False
        return True

    def forget(self, bee: HostedBee) -> None:
        """The bee ended: its slot is free."""
        with self._lock:
            self._bees.pop(id(bee), None)

    def running(self) -> int:
        with self._lock:
            return len(self._bees)

    def issues(self) -> frozenset[int]:
        """The issues whose bee runs in this process (a reaper never touches them)."""
        with self._lock:
            return frozenset(bee.issue for bee in self._bees.values())
