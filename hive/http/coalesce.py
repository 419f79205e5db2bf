"""One computation shared by every caller that asks while it waits (the orders listing
and the metrics: a store query and an encoding each, asked by many clients at once).

A caller never gets an answer older than its call: it joins the computation that starts
next, never one already running. So while a computation runs, every caller that arrives
waits for the next one, which starts as the running one ends and answers them all: at
most two computations' time for any caller, one computation per round however many ask.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class _Run(Generic[T]):
    def __init__(self) -> None:
        self.done = threading.Event()
        self.value: T | None = None
        self.error: BaseException | None = None


class Coalesced(Generic[T]):
    """`Coalesced(compute)()` is `compute()`, shared as the module says. An error of the
    computation is raised to every caller it answers."""

    def __init__(self, compute: Callable[[], T]) -> None:
        self._compute = compute
        self._lock = threading.Lock()
        self._running: _Run[T] | None = None
        self._next: _Run[T] | None = None

    def __call__(self) -> T:
        before: _Run[T] | None = None
        with self._lock:
            if self._running is None:
                run: _Run[T] = _Run()
                self._running, lead = run, True
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
