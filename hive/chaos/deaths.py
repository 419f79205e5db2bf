"""When processes die, as the kernel tells it.

A pidfd is opened on each process while it lives; it becomes readable the moment the
process exits (a zombie counts: it runs nothing), and a thread of its own waits on all of
them and notes each one's moment as it comes. Looking for the processes instead (a walk
of /proc until they are gone) times the looker: on a loaded machine one walk takes
seconds, and a chaos run once reported 7.6-8.0 s for agents its agents' own log shows
gone within 2 s of their runner's death.
"""

from __future__ import annotations

import contextlib
import os
import select
import threading
import time
from collections.abc import Iterable

# how long the watching thread waits between looks at whether it was asked to stop
_STOP_POLL_MS = 100


class Deaths:
    """The moments (time.monotonic()) `pids` die, noted from now on. Call `close` (or
    `wait_all`) to stop watching; a pid already gone when watched died at that moment."""

    def __init__(self, pids: Iterable[int]) -> None:
        self._lock = threading.Lock()
        self._gone: dict[int, float] = {}
        self._fds: dict[int, int] = {}  # pidfd -> pid
        self._stop = threading.Event()
        self._all_gone = threading.Event()
        self.pids = tuple(dict.fromkeys(pids))
        now = time.monotonic()
        for pid in self.pids:
            try:
                self._fds[os.pidfd_open(pid)] = pid
            except ProcessLookupError:
                self._gone[pid] = now
        self._thread = threading.Thread(target=self._watch, name="deaths", daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        poller = select.poll()
        for fd in self._fds:
            poller.register(fd, select.POLLIN)
        left = set(self._fds)
        try:
            while left and not self._stop.is_set():
                for fd, _events in poller.poll(_STOP_POLL_MS):
                    at = time.monotonic()
                    poller.unregister(fd)
                    left.discard(fd)
                    with self._lock:
                        self._gone[self._fds[fd]] = at
        finally:
            for fd in self._fds:
                with contextlib.suppress(OSError):
                    os.close(fd)
            self._all_gone.set()

    def died(self, pid: int) -> float | None:
        """The moment `pid` died; None while it lives."""
        with self._lock:
            return self._gone.get(pid)

    def wait_all(self, seconds: float) -> dict[int, float | None]:
        """Wait up to `seconds` for every pid to die, then stop watching; each pid's
        moment of death (None: alive at the end of the wait)."""
        self._all_gone.wait(seconds)
        self.close()
        with self._lock:
            return {pid: self._gone.get(pid) for pid in self.pids}

    def close(self) -> None:
        """Stop watching (safe twice)."""
        self._stop.set()
        self._thread.join()


def outlived(deaths: dict[int, float | None], since: float) -> float | None:
    """How long after `since` the last of `deaths` died (0 when all died before it);
    None when one never did."""
    moments = list(deaths.values())
    if any(at is None for at in moments):
        return None
    return max([0.0, *(at - since for at in moments if at is not None)])
