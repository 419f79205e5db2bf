"""The drain (seed 002, the drain card), driven by `DrainActor` on SIGTERM.

The `SignalBridge` runs the actor's drain hook while the tree keeps running. The hook
first marks the process draining. Readiness answers 503, `queen_runner.draining` is set,
the claimer claims nothing and no bee starts here.

Then the hook steps the card every `step_seconds`, and at once when a piece of work
ends and leaves the registry. Each step asks `drain_verdict(kind, ended, waited, cap)`
for every piece of work this process holds (`work.WorkRegistry`).

- Bees are held until they end or the cap. Then they are handed back all at once, in
  parallel, under one HAND_BACK_SECONDS deadline.
- Reviews are stopped.
- Rounds, jobs and waits are left to the store. Rounds keep going while something
  holds, as long as they start no bee here; the Queen asks `takes_new_work`.

When `exit_step` says EXIT_NOW, the hook returns. The root stops its children in
reverse order, and the process exits 0. One summary line says what happened.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hive.actors.messages import CLAIMER, DRAIN, QUEEN, DrainBegan, TreeStarted, WorkLeft
from hive.actors.work import WorkItem, WorkRegistry
from hive.metrics import HiveMetrics
from hive.rules.drain import (
    DV_DONE,
    DV_HAND_BACK,
    DV_HOLD,
    DV_LEAVE,
    DV_STOP,
    EXIT_NOW,
    HAND_BACK_SECONDS,
    drain_verdict,
    exit_step,
)
from supervisors import Registry, SignalBridge, SupervisedActor

log = logging.getLogger("hive.drain")

DRAIN_STEP_SECONDS = 1.0


@dataclass(frozen=True)
class DrainConfig:
    cap_seconds: int = 1800
    hand_back_seconds: float = HAND_BACK_SECONDS
    step_seconds: float = DRAIN_STEP_SECONDS


@dataclass(frozen=True)
class DrainStep:
    exit: bool
    holding: int
    stopping: int


class Drain:
    """One drain. `run_once()` is one step of the card; tests call it with a fake clock."""

    def __init__(
        self,
        work: WorkRegistry,
        metrics: HiveMetrics,
        config: DrainConfig,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.work = work
        self.metrics = metrics
        self.config = config
        self.clock = clock
        self.began = clock()
        self._known: dict[int, WorkItem] = {}
        self._first_step = True
        self.held_at_start = 0
        self._held: set[int] = set()
        self._ended_on_own: set[int] = set()
        self._handing: dict[int, threading.Thread] = {}
        self._hand_back_began: float | None = None
        self._handed_back: set[int] = set()
        self._given_up: set[int] = set()
        self._stopped: set[int] = set()
        self._last_stop: float | None = None
        self._left: set[int] = set()

    def run_once(self) -> DrainStep:
        now = self.clock()
        waited = int(now - self.began)
        for item in self.work.items():  # an item that ended may have left the registry
            self._known.setdefault(id(item), item)
        holding = stopping = 0
        for key, item in self._known.items():
            verdict = drain_verdict(item.kind, item.ended, waited, self.config.cap_seconds)
            if self._first_step and verdict in (DV_HOLD, DV_HAND_BACK):
                self.held_at_start += 1
            if verdict == DV_DONE:
                self._on_done(key)
            elif verdict == DV_LEAVE:
                self._left.add(key)
            elif verdict == DV_STOP:
                self._stop(key, item, now)
                stopping += 1
            elif verdict == DV_HOLD:
                self._held.add(key)
                holding += 1
            elif verdict == DV_HAND_BACK:
                self._held.add(key)
                if self._hand_back(key, item, now):
                    holding += 1
        self._first_step = False
        self.metrics.drain_held.set(holding)
        since_stop_ms = int((now - self._last_stop) * 1000) if self._last_stop else 0
        step = exit_step(holding, stopping, since_stop_ms)
        return DrainStep(step == EXIT_NOW, holding, stopping)

    def summary(self) -> str:
        return (
            f"drain: cap {self.config.cap_seconds} s, took {self.clock() - self.began:.1f} s; "
            f"held at start {self.held_at_start}, ended on their own {len(self._ended_on_own)}, "
            f"handed back {len(self._handed_back)}, stopped {len(self._stopped)}, "
            f"left {len(self._left)}"
            + (f", given up {len(self._given_up)}" if self._given_up else "")
        )

    def _on_done(self, key: int) -> None:
        if key in self._handing:
            self._handed_back.add(key)
        elif key in self._held:
            self._ended_on_own.add(key)

    def _stop(self, key: int, item: WorkItem, now: float) -> None:
        if key in self._stopped:
            return
        self._stopped.add(key)
        self._last_stop = now
        _in_thread(f"stop-{item.id}", getattr(item, "stop", None))

    def _hand_back(self, key: int, item: WorkItem, now: float) -> bool:
        """Start the item's hand-back, once. Returns whether it still holds the drain. It
        holds until it ends, or until the one deadline for every hand-back passes."""
        if self._hand_back_began is None:
            self._hand_back_began = now
        if key not in self._handing:
            action = getattr(item, "hand_back", None)
            self._handing[key] = _in_thread(f"hand-back-{item.id}", action)
        if now - self._hand_back_began >= self.config.hand_back_seconds:
            if key not in self._given_up:
                self._given_up.add(key)
                log.error(
                    "hand-back of %s did not end within %gs; leaving it",
                    item.id,
                    self.config.hand_back_seconds,
                )
            return False
        return True


def _in_thread(name: str, action: Callable[[], object] | None) -> threading.Thread:
    thread = threading.Thread(target=action or (lambda: None), name=name, daemon=True)
    thread.start()
    return thread


class DrainActor(SupervisedActor):
    """The drain's actor, registered as DRAIN and started last. `on_start` adds the
    drain hook to the bridge and tells the Queen `TreeStarted`. `on_stop` removes the
    hook; stopping twice is safe. The hook runs in the bridge's thread (see the module).
    A `WorkLeft` message only wakes it for its next step."""

    def __init__(
        self,
        work: WorkRegistry,
        metrics: HiveMetrics,
        names: Registry,
        bridge: SignalBridge,
        config: DrainConfig,
    ) -> None:
        super().__init__()
        self.work = work
        self.metrics = metrics
        self.names = names
        self.bridge = bridge
        self.config = config
        self.drain: Drain | None = None
        self._remove: Callable[[], None] = lambda: None
        self._stopping = threading.Event()
        self._step = threading.Event()  # set by WorkLeft (or the stop): step at once
        self.register_as(names, DRAIN)

    def on_start(self) -> None:
        self._remove = self.bridge.add_drain_hook(self._hook)
        # started last: every sibling is up, the bee pool too; the Queen's first round
        # may have found none and need not wait for her next tick
        self.names.tell(QUEEN, TreeStarted())

    def on_stop(self) -> None:
        self._stopping.set()
        self._step.set()  # the hook's wait: it sees the stop at once
        self._remove()

    def on_receive(self, message: Any) -> None:
        if isinstance(message, WorkLeft):
            self._step.set()

    def _hook(self, signum: int) -> None:
        # readiness goes 503, the claimer stops claiming, no bee starts here
        self.work.begin_drain()
        self.names.tell(CLAIMER, DrainBegan())  # it says so in queen_runner at once
        drain = self.drain = Drain(self.work, self.metrics, self.config)
        log.info("draining: cap %d s, %d held now", self.config.cap_seconds, self.work.holding())
        while True:
            self._step.clear()  # before the step: an item leaving during it wakes the next
            if drain.run_once().exit:
                break
            # the next step: at once when a piece of work ends (the last bee's end is not
            # seen up to a step late), else after step_seconds (the cap, the stops)
            self._step.wait(self.config.step_seconds)
            if self._stopping.is_set():
                break  # the tree is stopping without us: nothing left to drive
        log.info("%s", drain.summary())
