"""Test actors and a journal to synchronise on (events, never sleeps)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from supervisors import ChildSpec, Restart, SupervisedActor

DEADLINE_SECONDS = 5.0
POLL_SECONDS = 0.01


class Journal:
    """What the test actors did, in order; ``wait_until`` blocks on a condition."""

    def __init__(self) -> None:
        self.entries: list[tuple[str, str]] = []
        self._cond = threading.Condition()
        self.actors: list[SupervisedActor] = []

    def add(self, what: str, who: str) -> None:
        with self._cond:
            self.entries.append((what, who))
            self._cond.notify_all()

    def of(self, what: str) -> list[str]:
        with self._cond:
            return [who for w, who in self.entries if w == what]

    def count(self, what: str, who: str) -> int:
        return self.of(what).count(who)

    def mark(self) -> int:
        with self._cond:
            return len(self.entries)

    def since(self, mark: int, what: str) -> list[str]:
        with self._cond:
            return [who for w, who in self.entries[mark:] if w == what]

    def wait_until(self, condition: Callable[[], bool], timeout: float = DEADLINE_SECONDS) -> None:
        deadline = time.monotonic() + timeout
        with self._cond:
            while not condition():
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(
                        f"condition not met in {timeout}s; journal: {self.entries}"
                    )
                self._cond.wait(min(left, POLL_SECONDS))  # also polls non-journal state


class Crash:
    """Tell this to a Worker: it raises in the handler (an abnormal exit)."""


class Quit:
    """Tell this to a Worker: it stops itself (a normal exit)."""


class Block:
    """Tell this to a Worker: it blocks in the handler until ``release`` is set."""

    def __init__(self, release: threading.Event) -> None:
        self.release = release


class Worker(SupervisedActor):
    def __init__(
        self,
        name: str,
        journal: Journal,
        *,
        fail_on_start: bool = False,
        stop_seconds: float = 0.0,
        stop_gate: Callable[[], None] | None = None,
    ) -> None:
        super().__init__()
        self.name = name
        self.journal = journal
        self.fail_on_start = fail_on_start
        self.stop_seconds = stop_seconds
        self.stop_gate = stop_gate
        self.killed = threading.Event()
        journal.actors.append(self)

    def on_start(self) -> None:
        if self.fail_on_start:
            self.journal.add("start_failed", self.name)
            raise RuntimeError(f"{self.name} cannot start")
        self.journal.add("start", self.name)

    def on_stop(self) -> None:
        self.journal.add("stopping", self.name)
        if self.stop_gate is not None:
            self.stop_gate()
        if self.stop_seconds:
            # The workload of a slow stop (what the test measures), not synchronisation.
            threading.Event().wait(self.stop_seconds)
        self.journal.add("stop", self.name)

    def on_kill(self) -> None:
        self.killed.set()
        self.journal.add("kill", self.name)

    def on_receive(self, message: Any) -> Any:
        if isinstance(message, Crash):
            raise RuntimeError(f"{self.name} crashed")
        if isinstance(message, Quit):
            self.stop()
        elif isinstance(message, Block):
            self.journal.add("blocked", self.name)
            message.release.wait()
            self.journal.add("unblocked", self.name)
        return None


def worker(
    name: str, journal: Journal, restart: Restart = Restart.PERMANENT, **kw: Any
) -> ChildSpec:
    shutdown = kw.pop("shutdown", None)
    return ChildSpec(
        name, lambda: Worker.start(name, journal, **kw), restart=restart, shutdown=shutdown
    )


def ref_of(sup: Any, child_id: str) -> Any:
    for row in sup.which_children():
        if row.id == child_id:
            return row.target
    raise KeyError(child_id)
