"""A bee: one order's turn in this process (DESIGN 5.4 to 5.6), and `BeeActor`, the pool
child that owns it.

The turn is a subprocess (or a thread, for `python:`) watched by the bee's own thread,
never by a message handler, so the actor answers messages while it runs. That thread:
starts the turn through the shared `cut_and_start` (the caller's ledger in between);
renews the claim every `HIVE_RUNNER_SECONDS`, fenced (the heartbeat lives here, so a
restart of the claimer costs none): an exception is retried at the next tick, zero rows
renewed means the order was reaped or re-dispatched, and the turn is stopped with nothing
more written to the row; then salvages, bundles and ends the order in one fenced
statement. A Queen's own bee (fence runner None) has no claim to renew.

`hand_back()` (the drain, at the cap; or a stop of the tree) stops the turn (abort, the
grace, SIGKILL to its group), salvages what it left (`handed back`), stores the bundle
and ends the order `handed back`: its issue is free at once.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pykka

from hive.actors.ending import Leftover, close_order, order_ending
from hive.actors.messages import CLAIMER, QUEEN, BeeDone, OrderEnded, SlotFree
from hive.actors.runtime import Runtime
from hive.actors.start import StartPlan, cut_and_start
from hive.actors.transcript import TranscriptWriter
from hive.agents import Turn
from hive.git.worktrees import remove_worktree, worktree_path
from hive.rules.drain import HAND_BACK_SECONDS, WK_BEE
from hive.rules.states import ENDED_BADLY, HANDED_BACK
from hive.store import bundles, listen, orders
from hive.store.orders import Fence, OrderEnding
from supervisors import SupervisedActor

log = logging.getLogger("hive.bee")

LOST = "its order was reaped or re-dispatched"
# how long a Queen's round waits for her bee's row to be written
START_WAIT_SECONDS = 60.0


@dataclass(frozen=True)
class BeeOrder:
    """One order for a bee: its fence (runner None: the Queen's own), what to start, and
    the caller's ledger (insert for the Queen, reset `dispatched_at` for a runner)."""

    fence: Fence
    plan: StartPlan
    ledger: Callable[[], bool]


@dataclass(frozen=True)
class BeeStatus:
    issue: int
    runner: str | None  # None: the Queen's own bee
    turn_started: bool
    handing_back: bool
    ended: bool
    outcome: str | None  # the order's outcome once this bee ended it


class Bee:
    """A work item of kind WK_BEE (the drain holds it); thread-safe."""

    kind = WK_BEE

    def __init__(self, runtime: Runtime, order: BeeOrder) -> None:
        self.runtime = runtime
        self.order = order
        self.issue = order.fence.issue
        self.id = f"bee-{self.issue}"
        self.decided = threading.Event()  # the start either landed its ledger or failed
        self.landed = False
        self.start_error: str | None = None
        self.outcome: str | None = None
        self._done = threading.Event()
        self._lock = threading.Lock()
        self._turn: Turn | None = None
        self._worktree: Path | None = None
        self._base_rev = order.plan.base
        self._handing_back = False
        self._hand_back_deadline: float | None = None
        self._lost = False
        self._leave: Callable[[], None] = lambda: None

    @property
    def ended(self) -> bool:
        return self._done.is_set()

    def status(self) -> BeeStatus:
        with self._lock:
            return BeeStatus(
                self.issue,
                self.order.fence.runner,
                self._turn is not None,
                self._handing_back,
                self._done.is_set(),
                self.outcome,
            )

    def wait(self, timeout: float | None = None) -> bool:
        return self._done.wait(timeout)

    def run(
        self,
        owner: SupervisedActor | None = None,
        leave: Callable[[], None] = lambda: None,
        on_done: Callable[[], None] = lambda: None,
    ) -> None:
        """Start the bee's thread; returns at once. At its end the thread calls `leave`
        (it leaves the work registry, which the host added it to), tells the Queen and
        the claimer (`OrderEnded`, `SlotFree`), then calls `on_done`."""
        self._leave = leave
        thread = threading.Thread(
            target=self._life, args=(owner, on_done), name=self.id, daemon=True
        )
        thread.start()

    def hand_back(self, deadline_seconds: float = HAND_BACK_SECONDS) -> bool:
        """Stop the turn and end the order `handed back` (see the module); True once the
        order is ended, within `deadline_seconds`. A second call (the tree stopping after
        the drain gave up on it) waits only for what is left of the first one's deadline:
        a turn that cannot be killed does not hold the exit twice."""
        with self._lock:
            first = self._hand_back_deadline is None
            deadline = self._hand_back_deadline or time.monotonic() + deadline_seconds
            self._hand_back_deadline = deadline
            self._handing_back = True
            turn = self._turn
        if first and turn is not None:
            turn.stop(HANDED_BACK)  # within LANE_FREE_MS: abort, grace, SIGKILL to the group
        return self._done.wait(max(0.0, deadline - time.monotonic()))

    # --- the bee's thread -------------------------------------------------------------

    def _life(self, owner: SupervisedActor | None, on_done: Callable[[], None]) -> None:
        try:
            self._run(owner)
        except Exception:
            log.exception("bee failed", extra={"issue": self.issue})
        finally:
            self.decided.set()
            self._done.set()
            self._leave()
            names = self.runtime.names
            if self.start_error is None or self.order.fence.runner is not None:
                # an order ended (or a runner's start failed and ended it): its files and
                # key are free. A Queen's bee that never started wrote no row; her round
                # already reported it, and waking her would retry it at once, again and
                # again: the next try waits for the tick
                names.tell(QUEEN, OrderEnded(self.issue))
            # the slot is free only now: the ending's NOTIFY may have woken the claimer
            # while it was still held, and it would then wait out a whole poll
            names.tell(CLAIMER, SlotFree(self.issue))
            on_done()

    def _run(self, owner: SupervisedActor | None) -> None:
        rt, order = self.runtime, self.order
        assert rt.checkout is not None, "a bee needs the checkout"
        writer = TranscriptWriter(rt.db, order.fence.conversation_id, self.issue)
        spawned: list[Turn] = []

        def on_spawn(turn: Turn) -> None:
            # a kill (the hard stop) reaches the turn from its first moment, also while
            # the ledger is written, which may wait on the store
            spawned.append(turn)
            if owner is not None and turn.pgid is not None:
                owner.add_process_group(turn.pgid)

        try:
            started = cut_and_start(
                rt.checkout,
                order.plan,
                order.ledger,
                on_line=writer.put,
                earlier_bundle=self._earlier_bundle,
                on_spawn=on_spawn,
            )
        except Exception as err:
            writer.close()
            _forget_groups(owner, spawned)
            self._start_failed(err)
            return
        if started is None:  # the ledger did not land: the row is someone else's
            writer.close()
            _forget_groups(owner, spawned)
            self.decided.set()
            # its cut goes too: a next attempt here must start from the stored branch
            self._worktree = worktree_path(rt.checkout.workdir, self.issue)
            self._remove_worktree()
            return
        turn = started.turn
        with self._lock:
            self._turn, self._worktree = turn, Path(started.cut.path)
            self._base_rev = started.base_rev
            handing_back = self._handing_back
        self.landed = True
        self.decided.set()
        rt.metrics.bees_running.inc()
        log.info("turn started on %s", started.cut.branch, extra={"issue": self.issue})
        try:
            if handing_back:
                turn.stop(HANDED_BACK)
            self._watch(turn)
        finally:
            rt.metrics.bees_running.dec()
            writer.close()
            if owner is not None and turn.pgid is not None:
                owner.discard_process_group(turn.pgid)
        self._close(turn)

    def _watch(self, turn: Turn) -> None:
        """Wait for the turn's end, renewing the claim every HIVE_RUNNER_SECONDS."""
        every = self.runtime.settings.runner_seconds
        while not turn.wait(every):
            if self.order.fence.runner is not None and not self._lost:
                self._heartbeat(turn)

    def _heartbeat(self, turn: Turn) -> None:
        metrics = self.runtime.metrics
        try:
            renewed = orders.heartbeat(self.runtime.db, self.order.fence)
        except Exception as err:  # one failed renewal is retried, not death
            log.warning("heartbeat failed (%s); retrying", err, extra={"issue": self.issue})
            return
        if renewed:
            metrics.heartbeats.inc()
            return
        metrics.heartbeat_lost.inc()
        self._lost = True
        log.warning(
            "heartbeat found no row: %s; stopping the turn", LOST, extra={"issue": self.issue}
        )
        turn.stop(LOST)

    def _close(self, turn: Turn) -> None:
        rt, ending = self.runtime, turn.ending
        assert ending is not None and self._worktree is not None
        with self._lock:
            handed_back = self._handing_back
        turn_end = order_ending(self.order.fence, ending, handed_back)
        outcome = turn_end.outcome
        rt.metrics.bee_seconds.labels(outcome=outcome).observe(ending.seconds)
        if self._lost:
            self.outcome = None
            self._remove_worktree()
            return  # the row is no longer this turn's: write nothing to it
        plan = self.order.plan
        closing = close_order(
            rt.db,
            rt.checkout,  # type: ignore[arg-type]
            rt.metrics,
            turn_end,
            Leftover(self._worktree, plan.boundary, plan.base, self._base_rev),
            rt.settings.bundle_max_bytes,
        )
        self.outcome = closing.outcome if closing.landed else None
        self._remove_worktree()
        if closing.landed:
            try:
                listen.notify_ended(rt.db, self.issue)
            except Exception as err:  # only a hint: the Queen's tick still comes
                log.warning("could not notify the ending: %s", err, extra={"issue": self.issue})
        if outcome == HANDED_BACK and closing.landed:
            rt.metrics.handed_back.inc()
        log.info(
            "order ended %s%s (salvaged %d files, bundle %d bytes)",
            closing.outcome,
            "" if closing.landed else ", but the row was no longer this turn's",
            len(closing.salvaged_files),
            closing.bundle_bytes,
            extra={"issue": self.issue},
        )

    def _remove_worktree(self) -> None:
        """A runner's worktree goes once its order ended: the work is in the store, and
        a next attempt here starts from the stored bundle, not from stale files. The
        Queen keeps her own (what a bee left outside its boundary stays on her disk)."""
        rt = self.runtime
        if self.order.fence.runner is None or self._worktree is None or rt.checkout is None:
            return
        try:
            remove_worktree(rt.checkout.repo, self._worktree)
        except Exception as err:
            log.warning("worktree not removed: %s", err, extra={"issue": self.issue})

    def _start_failed(self, err: Exception) -> None:
        self.start_error = f"could not start: {err}".splitlines()[0]
        log.warning("%s", self.start_error, extra={"issue": self.issue})
        if self.order.fence.runner is None:
            return  # the Queen's row was never written: her round reports it
        try:
            ending = OrderEnding(self.order.fence, ENDED_BADLY, self.start_error)
            orders.end(self.runtime.db, ending)
        except Exception:
            log.exception("could not end the order", extra={"issue": self.issue})

    def _earlier_bundle(self) -> bytes | None:
        found = bundles.get(self.runtime.db, self.issue)
        return found.data if found is not None else None


def _forget_groups(owner: SupervisedActor | None, turns: list[Turn]) -> None:
    """A stopped turn's group is no longer the owner's to kill (its number may be reused)."""
    for turn in turns:
        if owner is not None and turn.pgid is not None:
            owner.discard_process_group(turn.pgid)


class BeeActor(SupervisedActor):
    """A temporary pool child, one per order. `on_start` starts the bee's thread and
    returns; the actor stops itself once the order has ended. `on_stop` before that (the
    tree stops without a drain, or the drain already gave up) hands the bee back, bounded
    by HAND_BACK_SECONDS; a kill SIGKILLs the turn's process group."""

    def __init__(self, bee: Bee, leave: Callable[[], None] = lambda: None) -> None:
        super().__init__()
        self.bee = bee
        self._leave = leave

    def on_start(self) -> None:
        self.bee.run(owner=self, leave=self._leave, on_done=self._done)

    def on_receive(self, message: Any) -> None:
        """`BeeDone` (told by the bee's own thread): the order has ended; stop."""
        if isinstance(message, BeeDone):
            self.stop()

    def on_stop(self) -> None:
        if not self.bee.ended:
            self.bee.hand_back()

    def status(self) -> BeeStatus:
        """What the bee is doing (answered at once, while its turn runs: the turn is
        watched by the bee's thread, never by a handler). Ask it through a proxy."""
        return self.bee.status()

    def _done(self) -> None:
        with contextlib.suppress(pykka.ActorDeadError):  # stopped already: nothing to do
            self.actor_ref.tell(BeeDone(self.bee.issue))
