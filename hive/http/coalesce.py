"""One computation shared by every caller that asks while it waits (the orders listing
and the metrics: a store query and an encoding each, asked by many clients at once).

A caller never gets an answer older than its call: it joins the computation that starts
next, never one already running. So while a computation runs, every caller that arrives
waits for the next one, which starts as the running one ends and answers them all: at
most two computations' time for any caller, one computation per round however many ask.

With `moment_seconds` above 0, a caller who arrives within that moment of a computation's
start joins it instead (at most one computation's time): its answer began at most a moment
before its call. The orders listing and the metrics take a moment of 0.1 s: what they show
is written by other processes, and a scrape 0.1 s old tells nothing less.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class _Run(Generic[T]):
    def __init__(self) -> None:
        self.started = 0.0  # set when its computation starts
        self.done = threading.Event()
        self.value: T | None = None
        self.error: BaseException | None = None


class Coalesced(Generic[T]):
    """`Coalesced(compute)()` is `compute()`, shared as the module says. An error of the
    computation is raised to every caller it answers."""

    def __init__(self, compute: Callable[[], T], moment_seconds: float = 0.0) -> None:
        self._compute = compute
        self._moment = moment_seconds
        self._lock = threading.Lock()
        self._running: _Run[T] | None = None
        self._next: _Run[T] | None = None

    def __call__(self) -> T:
        before: _Run[T] | None = None
        now = time.monotonic()
        with self._lock:
            if self._running is None:
                run: _Run[T] = _Run()
                run.started = now
                self._running, lead = run, True
            elif now - self._running.started < self._moment:
                run, lead = self._running, False
            elif self._next is None:
                run = _Run()
                self._next, lead, before = run, True, self._running
            else:
                run, lead = self._next, False
        if lead:
            if before is not None:
                before.done.wait()
                with self._lock:
                    self._running, self._next = run, None
                    run.started = time.monotonic()
            self._lead(run)
        else:
            run.done.wait()
        if run.error is not None:
            raise run.error
        return run.value  # type: ignore[return-value]

    def _lead(self, run: _Run[T]) -> None:
        try:
            run.value = self._compute()
        except BaseException as err:  # handed to every caller of this run
            run.error = err
        finally:
            with self._lock:
                if self._running is run:
                    self._running = None
            run.done.set()
