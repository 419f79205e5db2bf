"""``Pool``: a dynamic set of children from one template (OTP's simple_one_for_one).

The pool starts empty; ``start_child(*args)`` adds one child made by
``template.start(*args)``, ``terminate_child(id)`` stops and forgets it. Each child is
restarted on its own by the template's restart type (the hive's bees are temporary: one
per slot, never restarted). On shutdown the children stop in parallel, each by the
template's shutdown, so the pool stops in about one child's time.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from typing import Any

from supervisors.child import StopOutcome, Stopped, stop
from supervisors.intensity import DEFAULT_INTENSITY, DEFAULT_PERIOD_SECONDS
from supervisors.reports import EventHook
from supervisors.spec import ChildSpec
from supervisors.strategies import Strategy
from supervisors.supervisor import NoSuchChild, Supervisor, _Slot


class Pool(Supervisor):
    strategy = Strategy.SIMPLE_ONE_FOR_ONE
    _parallel_shutdown = True

    def __init__(
        self,
        name: str,
        template: ChildSpec,
        *,
        intensity: int = DEFAULT_INTENSITY,
        period_seconds: float = DEFAULT_PERIOD_SECONDS,
        on_event: EventHook | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(
            name,
            [],
            intensity=intensity,
            period_seconds=period_seconds,
            on_event=on_event,
            clock=clock,
        )
        self.template = template
        self._numbers = itertools.count(1)

    def start_child(self, *args: Any, child_id: str | None = None) -> str:
        """Start one child with ``template.start(*args)``; returns its id (``child_id`` or
        ``<template id>-<n>``). Raises ``StartError`` if it fails to start (not counted as
        a restart), ``ValueError`` for an id in use, ``SupervisorStopped`` if the pool is
        not running. Blocks until the child's ``on_start`` returned."""

        def add() -> str:
            cid = child_id or f"{self.template.id}-{next(self._numbers)}"
            with self._lock:  # which_children() reads the slots from other threads
                if cid in self._slots:
                    raise ValueError(f"pool {self.name!r} already has a child {cid!r}")
                self._slots[cid] = _Slot(self.template, tuple(args))
            try:
                self._start(cid, restart=False)
            except BaseException:
                with self._lock:
                    self._slots.pop(cid, None)
                raise
            return cid

        result: str = self._call(add)
        return result

    def terminate_child(self, child_id: str) -> Stopped:
        """Stop one child by the template's shutdown and forget it (it is not restarted).
        Blocks the caller, not the pool, for up to that shutdown. Raises ``NoSuchChild``."""

        def take() -> Any:
            with self._lock:
                slot = self._slots.pop(child_id, None)
                if slot is None:
                    raise NoSuchChild(f"pool {self.name!r} has no child {child_id!r}")
                return self._running.pop(child_id, None)

        running = self._call(take)
        if running is None:
            return Stopped(StopOutcome.ALREADY, 0.0, None)
        done = stop(running, self.template)
        self._report_stop(child_id, done, "terminate_child")
        return done
