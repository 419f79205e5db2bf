"""A bee: one order's turn in this process (DESIGN 5.4 to 5.6). `BeeActor` (bee_actor.py)
is the pool child that owns it.

The bee's own thread does the work, so the actor answers messages while the turn runs.
That thread runs the order's life:

1. It cuts the worktree and starts the turn (`cut_and_start`).
2. It writes the order's ledger, then answers the caller's `BeeOrder` with a `StartReply`.
3. It renews a runner's claim every `HIVE_RUNNER_SECONDS` while the turn runs.
4. It salvages, bundles and ends the order in one fenced statement.

A renewal that raises is retried at the next tick. A renewal that matches no row means
the order was reaped or re-dispatched. The turn is then stopped, and nothing more is
written. A Queen's own bee has no claim to renew.

`hand_back()` runs on a drain at its cap, or when the tree stops. It stops the turn,
salvages what it left, and ends the order `handed back`. Its issue is free at once.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path

from hive.actors.bee.config import BeeConfig, BeePorts
from hive.actors.bee.ending import (
    Leftover,
    close_order,
    order_ending,
)
from hive.actors.bee.host import tell_left
from hive.actors.bee.order import BeeOrder, InsertOrder, Start, StartReply
from hive.actors.bee.start import Started, cut_and_start
from hive.actors.bee.state import NEXT, RENEWS, BeeState, BeeStatus
from hive.actors.messages import BeeLeft
from hive.agents import Turn
from hive.agents.transcript import HIVE
from hive.git.worktrees import park_worktree, worktree_path
from hive.rules.drain import HAND_BACK_SECONDS, WK_BEE
from hive.rules.states import ENDED_BADLY, HANDED_BACK
from hive.store import conversations, endings, orders
from hive.store.endings import OrderEnding
from hive.store.orders import Insertion
from hive.store.transcript_writer import TranscriptWriter
from supervisors import SupervisedActor
from supervisors.warden import warden

log = logging.getLogger("hive.bee")

LOST = "its order was reaped or re-dispatched"
# a bee that ended before it answered its start
NO_ANSWER = "its bee failed before its order was written"


class Bee:
    """One order's bee. It is a work item of kind WK_BEE, which the drain holds. It is
    thread-safe.

    Its state changes only in `_to`, under its lock. What it learns is written under the
    same lock, before the state that publishes it: `started` before RUNNING,
    `start_error` and `outcome` before ENDED."""

    kind = WK_BEE

    def __init__(self, ports: BeePorts, order: BeeOrder, config: BeeConfig) -> None:
        self.ports = ports
        self.order = order
        self.config = config
        self.issue = order.fence.issue
        self.id = f"bee-{self.issue}"
        self._changed = threading.Condition()
        self._state = BeeState.STARTING
        self._started: Started | None = None
        self._hand_back_deadline: float | None = None
        self.start_error: str | None = None
        self.outcome: str | None = None
        self._leave: Callable[[bool], None] = self._tell_left
        self._answered = False
        self._ledger_said = Start.FAILED  # what the ledger said, once it ran

    @property
    def state(self) -> BeeState:
        with self._changed:
            return self._state

    @property
    def ended(self) -> bool:
        return self.state is BeeState.ENDED

    @property
    def landed(self) -> bool:
        """Whether its ledger landed, so the order's row is this bee's."""
        with self._changed:
            return self._started is not None

    def status(self) -> BeeStatus:
        with self._changed:
            return BeeStatus(
                self.issue,
                self.order.fence.runner,
                self._state,
                self._started is not None,
                self.outcome,
            )

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until the bee has ended. Returns whether it did within `timeout`."""
        with self._changed:
            return self._changed.wait_for(lambda: self._state is BeeState.ENDED, timeout)

    def run(
        self,
        owner: SupervisedActor | None = None,
        leave: Callable[[bool], None] | None = None,
        on_done: Callable[[], None] = lambda: None,
    ) -> None:
        """Start the bee's thread and return at once. At its end the thread calls
        `leave(order_ended)`, then `on_done`. The host's `leave` tells the host `BeeLeft`.
        The host takes the bee off the work registry, then tells the Queen and the
        claimer (`OrderEnded`, `SlotFree`). A bee outside a host (`leave` None) tells
        them itself."""
        self._leave = leave or self._tell_left
        thread = threading.Thread(
            target=self._life, args=(owner, on_done), name=self.id, daemon=True
        )
        thread.start()

    def hand_back(self, deadline_seconds: float = HAND_BACK_SECONDS) -> bool:
        """Stop the turn and end the order `handed back` (see the module). Returns True once
        the order is ended within `deadline_seconds`. A second call comes when the tree
        stops after the drain gave up on the bee. It waits only for what is left of the
        first call's deadline, so a turn that cannot be killed does not hold the exit
        twice."""
        with self._changed:
            first = self._hand_back_deadline is None
            deadline = self._hand_back_deadline or time.monotonic() + deadline_seconds
            self._hand_back_deadline = deadline
            stop = first and self._state in (BeeState.STARTING, BeeState.RUNNING)
            if stop:
                self._to(BeeState.HANDING_BACK)
            started = self._started
        if stop and started is not None:
            started.turn.stop(HANDED_BACK)  # within LANE_FREE_MS: abort, grace, SIGKILL
        return self.wait(max(0.0, deadline - time.monotonic()))

    def withdraw(self) -> bool:
        """Withdraw the bee, because its caller gave up on its start. True when the bee had
        not begun its order; it then writes nothing and leaves as soon as it runs. False
        when it had begun, and it runs the order to its end."""
        return self.order.gate.withdraw()

    @property
    def withdrawn(self) -> bool:
        return self.order.gate.withdrawn

    def _answer(self, reply: StartReply) -> None:
        """Answer the order's start, once (a later answer is dropped)."""
        with self._changed:
            if self._answered:
                return
            self._answered = True
        self.order.reply.set(reply)

    def _ledger(self) -> bool:
        """Write the order's ledger, on the bee's own thread. Returns whether it landed."""
        if not self.order.gate.commit():
            self._ledger_said = Start.WITHDRAWN
            return False
        db, ledger = self.ports.db, self.order.ledger
        if isinstance(ledger, InsertOrder):
            written = orders.insert(db, ledger.new, queued=False, lease=ledger.lease)
            self._ledger_said = _INSERTED[written]
            return written is Insertion.WRITTEN
        landed = orders.mark_started(db, self.order.fence)
        self._ledger_said = Start.RUNNING if landed else Start.TAKEN
        return landed

    def _to(self, state: BeeState) -> BeeState:
        """Move to `state`, with the lock held, and return the state it left. Raises
        AssertionError for a move that `NEXT` does not allow."""
        was = self._state
        assert state in NEXT[was], f"a bee cannot go from {was.value} to {state.value}"
        self._state = state
        self._changed.notify_all()
        return was

    # --- the bee's thread -------------------------------------------------------------

    def _life(self, owner: SupervisedActor | None, on_done: Callable[[], None]) -> None:
        try:
            self._run(owner)
        except Exception:
            log.exception("bee failed", extra={"issue": self.issue})
        finally:
            with self._changed:  # a bee that failed ends from wherever it was
                self._state = BeeState.ENDED
                self._changed.notify_all()
            self._answer(StartReply(Start.FAILED, self.start_error or NO_ANSWER))
            # an order ended (or a runner's start failed and ended it): its files and key
            # are free. A Queen's bee that never started wrote no row; her round already
            # reported it, and waking her would retry it at once, again and again: the
            # next try waits for the tick
            # a withdrawn bee ended nothing: its caller gave the order back itself
            ran = self.start_error is None or self.order.fence.runner is not None
            self._leave(ran and not self.withdrawn)
            on_done()

    def _tell_left(self, order_ended: bool) -> None:
        """Tell the others that the bee left. A bee outside a host has no seat to leave,
        so it tells them itself."""
        tell_left(self.ports.names, BeeLeft(self.issue, 0, order_ended))

    def _run(self, owner: SupervisedActor | None) -> None:
        rt, order = self.ports, self.order
        if order.gate.withdrawn:  # started after its caller gave up: it cuts nothing
            log.info(
                "its start was given up before it ran: nothing written", extra={"issue": self.issue}
            )
            self._answer(StartReply(Start.WITHDRAWN))
            return
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
                self._ledger,
                on_line=writer.put,
                on_spawn=on_spawn,
                earlier=lambda bundle, conversation: conversations.earlier(
                    rt.db, self.issue, bundle=bundle, conversation=conversation
                ),
            )
        except Exception as err:
            writer.close()
            _forget_groups(owner, spawned)
            self._start_failed(err)
            return
        if started is None:  # the ledger did not land: the row is someone else's
            self._answer(StartReply(self._ledger_said))
            writer.close()
            _forget_groups(owner, spawned)
            # its cut goes too: a next attempt here must start from the stored branch
            self._remove_worktree(worktree_path(rt.checkout.workdir, self.issue))
            return
        turn = started.turn
        with self._changed:
            self._started = started
            handing_back = self._state is BeeState.HANDING_BACK
            if not handing_back:
                self._to(BeeState.RUNNING)
        self._answer(StartReply(Start.RUNNING))
        rt.metrics.bees_running.inc()
        log.info("turn started on %s", started.cut.branch, extra={"issue": self.issue})
        try:
            try:
                if handing_back:
                    turn.stop(HANDED_BACK)
                self._watch(turn)
            finally:
                rt.metrics.bees_running.dec()
                if owner is not None and turn.pgid is not None:
                    owner.discard_process_group(turn.pgid)
            # the ending's own sentences (what was skipped, left outside or cut back)
            # follow the turn's last line
            self._close(started, lambda text: writer.put(HIVE, text))
        finally:
            writer.close()

    def _watch(self, turn: Turn) -> None:
        """Wait for the turn's end, renewing the claim every heartbeat_seconds."""
        self._fence(turn)
        while not turn.wait(self.config.heartbeat_seconds):
            if self.order.fence.runner is not None and self.state in RENEWS:
                self._heartbeat(turn)

    def _heartbeat(self, turn: Turn) -> None:
        metrics = self.ports.metrics
        try:
            renewed = orders.heartbeat(self.ports.db, self.order.fence)
        except Exception as err:  # one failed renewal is retried, not death
            log.warning("heartbeat failed (%s); retrying", err, extra={"issue": self.issue})
            return
        if renewed:
            metrics.heartbeats.inc()
            self._fence(turn)
            return
        metrics.heartbeat_lost.inc()
        with self._changed:
            self._to(BeeState.LOST)
        log.warning(
            "heartbeat found no row: %s; stopping the turn", LOST, extra={"issue": self.issue}
        )
        turn.stop(LOST)

    def _fence(self, turn: Turn) -> None:
        """Arm the turn's fence with the warden again (rules/fence.py). It runs when a
        runner's claim was just taken or renewed."""
        seconds = self.config.fence_seconds
        if seconds is not None and turn.pgid is not None and self.order.fence.runner:
            warden().fence(turn.pgid, seconds)

    def _close(self, started: Started, note: Callable[[str], None]) -> None:
        rt, ending = self.ports, started.turn.ending
        assert ending is not None
        worktree = Path(started.cut.path)
        with self._changed:
            was = self._to(BeeState.ENDING)
        plan = self.order.plan
        turn_end = order_ending(
            self.order.fence,
            ending,
            was is BeeState.HANDING_BACK,
            self.config.accounting,
            agent=plan.agent,
            conversation=started.turn.conversation,
        )
        outcome = turn_end.outcome
        rt.metrics.turn_ended(outcome, ending.seconds)
        if was is BeeState.LOST:
            self._remove_worktree(worktree)
            return  # the row is no longer this turn's: write nothing to it
        closing = close_order(
            rt.db,
            rt.checkout,
            rt.metrics,
            turn_end,
            Leftover(worktree, plan.boundary, plan.base, started.base_rev),
            self.config.bundle_max_bytes,
            # gone before the row ends: the ending lets a next attempt be claimed here,
            # and its cut takes the same path
            before_end=lambda: self._remove_worktree(worktree),
            key_index=self.order.key_index,
            note=note,
            sells=self.order.sells,
            group=rt.endings,
        )
        with self._changed:
            self.outcome = closing.outcome if closing.landed else None
        if outcome is HANDED_BACK and closing.landed:
            rt.metrics.handed_back.inc()
        log.info(
            "order ended %s%s (salvaged %d files, bundle %d bytes)",
            closing.outcome,
            "" if closing.landed else ", but the row was no longer this turn's",
            len(closing.salvaged_files),
            closing.bundle_bytes,
            extra={"issue": self.issue},
        )

    def _remove_worktree(self, worktree: Path) -> None:
        """Remove a runner's worktree once its turn is over. The work is in the store. A
        next attempt here starts from the stored bundle, not from stale files. The
        directory is parked for the next cut (`park_worktree`), which verifies it. The
        Queen keeps her own worktree, so what a bee left outside its boundary stays on
        her disk.

        The path is the issue's, not this attempt's. A next attempt of the issue may
        already count in this process, when its order was re-dispatched while this turn
        was being stopped. That attempt has cut the path or is about to, and then it is
        that attempt's to keep. The check and the removal hold the checkout's lock, as a
        cut does."""
        rt = self.ports
        if self.order.fence.runner is None:
            return
        with rt.checkout.lock:
            if self._newer_attempt_here():
                log.info("worktree left to the next attempt", extra={"issue": self.issue})
                return
            try:
                park_worktree(rt.checkout.repo, worktree)
            except Exception as err:
                log.warning("worktree not removed: %s", err, extra={"issue": self.issue})

    def _newer_attempt_here(self) -> bool:
        """Another bee of this issue counts in this process's work registry."""
        return any(
            bee is not self and getattr(bee, "issue", None) == self.issue
            for bee in self.ports.work.bees()
        )

    def _start_failed(self, err: Exception) -> None:
        with self._changed:
            self.start_error = f"could not start: {err}".splitlines()[0]
        log.warning("%s", self.start_error, extra={"issue": self.issue})
        self._answer(StartReply(Start.FAILED, self.start_error))
        if self.order.fence.runner is None:
            return  # the Queen's row was never written: her round reports it
        if not self.order.gate.commit():
            return  # its caller gave up on it and gives the claim back itself
        try:
            ending = OrderEnding(self.order.fence, ENDED_BADLY, self.start_error)
            endings.end(self.ports.db, ending)
        except Exception:
            log.exception("could not end the order", extra={"issue": self.issue})


def _forget_groups(owner: SupervisedActor | None, turns: list[Turn]) -> None:
    """A stopped turn's group is no longer the owner's to kill (its number may be reused)."""
    for turn in turns:
        if owner is not None and turn.pgid is not None:
            owner.discard_process_group(turn.pgid)


_INSERTED = {
    Insertion.WRITTEN: Start.RUNNING,
    Insertion.IN_FLIGHT: Start.IN_FLIGHT,
    Insertion.HELD: Start.HELD,
    Insertion.LEASE_GONE: Start.LEASE_GONE,
}
