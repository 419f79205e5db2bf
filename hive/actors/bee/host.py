"""The bee pool as the Queen, the claimer, the reaper and the drain see it, and the actor
that owns it.

The pool itself is a `supervisors.Pool` that the tree makes. A bee is a temporary child,
one per order, at most one per slot. The tree attaches each pool it makes here, so a
restart of the runner supervisor is seen by everyone.

`HostActor` owns the pool's seats. It starts each bee when the Queen or the claimer asks
(`StartBee`). Each bee's leave is a message to it (`BeeLeft`). So one thread adds a bee
to the work registry, takes it off again and fits the store pool to the bees running.
And the claimer hears `SlotFree` only after the bee has left the registry.

A bee counts in the work registry from its start until it has left. The host counts
those, names their issues (the reapers spare them) and refuses to start one once the
drain began.

The Queen and the claimer wait at most START_ASK_SECONDS for the host's answer. A bee
they gave up on is withdrawn: if the host starts it later, it writes nothing and leaves.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import pykka

from hive.actors.messages import CLAIMER, QUEEN, REVIEWER, BeeLeft, OrderEnded, SlotFree
from hive.actors.work import WorkItem, WorkRegistry
from supervisors import Pool, Registry, StartError, SupervisedActor, SupervisorStopped

log = logging.getLogger("hive.host")

# how long the Queen or the claimer waits for the host to start a bee; a start takes
# milliseconds, but a host busy with a stopping pool would hold them for its whole stop
START_ASK_SECONDS = 10.0


class HostedBee(WorkItem, Protocol):
    issue: int

    def withdraw(self) -> bool: ...

    @property
    def withdrawn(self) -> bool: ...


@dataclass(frozen=True)
class StartBee:
    """Start `bee` in the pool; asked of the `HostActor`. The answer is whether it started."""

    bee: HostedBee


def tell_left(names: Registry, left: BeeLeft) -> None:
    """Tell the others what a bee's leave means. The Queen and the reviewer hear that its
    order ended, when it did. The claimer hears that its slot is free."""
    if left.order_ended:
        names.tell(QUEEN, OrderEnded(left.issue))
        names.tell(REVIEWER, OrderEnded(left.issue))
    names.tell(CLAIMER, SlotFree(left.issue))


class BeeHost:
    """The bee pool's face. It is thread-safe. The Queen, the claimer, the reaper and the
    drain call `start`, `ready`, `running` and `issues` from their own threads. The
    seats change only on the `HostActor`'s thread."""

    def __init__(self, work: WorkRegistry, start_ask_seconds: float = START_ASK_SECONDS) -> None:
        self.start_ask_seconds = start_ask_seconds
        self._lock = threading.Lock()
        self._pool: Pool | None = None
        self._owner: pykka.ActorRef[Any] | None = None
        self.work = work
        self._watchers: list[Callable[[int], None]] = []
        self._seats: dict[int, tuple[HostedBee, Callable[[], None]]] = {}
        self._numbers = itertools.count(1)

    def watch(self, counted: Callable[[int], None]) -> None:
        """Call `counted(bees running)` whenever a bee starts or leaves here (the tree fits
        the store pool to it). It runs on the `HostActor`'s thread."""
        self._watchers.append(counted)

    def attach(self, pool: Pool) -> Pool:
        """The tree's pool factory passes each new pool through here."""
        with self._lock:
            self._pool = pool
        return pool

    def own(self, owner: pykka.ActorRef[Any]) -> None:
        """The `HostActor` owns the seats from its start."""
        with self._lock:
            self._owner = owner

    def disown(self, owner: pykka.ActorRef[Any]) -> None:
        """The `HostActor` lets the seats go at its end (a successor's hold stays)."""
        with self._lock:
            if self._owner is owner:
                self._owner = None

    @property
    def ready(self) -> bool:
        """A pool is attached and running, its owner runs, and the drain has not begun."""
        with self._lock:
            pool, owner = self._pool, self._owner
        return (
            pool is not None
            and pool.alive
            and owner is not None
            and owner.is_alive()
            and not self.work.draining
        )

    def start(self, bee: HostedBee) -> bool:
        """Start `bee` in the pool, asking the `HostActor`. False when no pool or owner
        runs here, or the drain began. A bee counts from here until it has left.

        The ask waits up to `start_ask_seconds`. A host that did not answer by then may
        still start the bee, so the bee is withdrawn and the answer is False. If it runs
        later, it writes nothing and leaves. A bee that already began its order cannot
        be withdrawn; the answer is True and it runs to its end."""
        with self._lock:
            owner = self._owner
        if owner is None:
            return False
        try:
            return bool(owner.ask(StartBee(bee), timeout=self.start_ask_seconds))
        except (pykka.ActorDeadError, pykka.Timeout):
            pass
        if not bee.withdraw():
            return True  # past its ledger: the order is the bee's
        log.warning(
            "the bee host did not start the bee within %gs: given up",
            self.start_ask_seconds,
            extra={"issue": bee.issue},
        )
        return False

    def running(self) -> int:
        return len(self.work.bees())

    def issues(self) -> frozenset[int]:
        """The issues whose bee runs in this process (a reaper never touches them)."""
        return frozenset(
            issue for bee in self.work.bees() if (issue := getattr(bee, "issue", None)) is not None
        )

    # --- the HostActor's thread ---------------------------------------------------------

    def seat(self, bee: HostedBee, owner: pykka.ActorRef[Any]) -> bool:
        """Admit `bee` to the work registry and start it in the pool
        (`BeeActor.start(bee, leave)`). At its end the bee calls `leave(order_ended)`,
        which tells `owner` `BeeLeft`. False when no pool runs, the drain began, or its
        asker gave up on it already."""
        if bee.withdrawn:
            return False
        with self._lock:
            pool = self._pool
        removed = None if pool is None else self.work.admit(bee)
        if pool is None or removed is None:
            return False
        number = next(self._numbers)
        with self._lock:
            self._seats[number] = (bee, removed)
        self._counted()

        def leave(order_ended: bool) -> None:
            # a host stopped meanwhile sweeps the ended bees when it stops or starts again
            with contextlib.suppress(pykka.ActorDeadError):
                owner.tell(BeeLeft(bee.issue, number, order_ended))

        try:
            pool.start_child(bee, leave)
        except (StartError, SupervisorStopped) as err:
            log.warning("could not start a bee: %s", err, extra={"issue": bee.issue})
            self.leave(number)
            return False
        return True

    def leave(self, number: int) -> None:
        """Take seat `number`'s bee off the work registry (safe twice)."""
        with self._lock:
            seat = self._seats.pop(number, None)
        if seat is not None:
            seat[1]()
            self._counted()

    def sweep(self) -> None:
        """Take every ended bee whose leave found no owner off the work registry."""
        with self._lock:
            ended = [number for number, (bee, _) in self._seats.items() if bee.ended]
        for number in ended:
            self.leave(number)

    def _counted(self) -> None:
        running = self.running()
        for counted in self._watchers:
            counted(running)


class HostActor(SupervisedActor):
    """The actor that owns the bee pool's seats (see the module). It starts before the
    pool and stops after it, so the bees the pool hands back at its stop still leave
    here."""

    def __init__(self, host: BeeHost, names: Registry) -> None:
        super().__init__()
        self.host = host
        self.names = names

    def on_start(self) -> None:
        self.host.sweep()  # a host that crashed left the ended bees of its time
        self.host.own(self.actor_ref)

    def on_receive(self, message: Any) -> Any:
        """`StartBee` is asked: start the bee and answer whether it started. `BeeLeft` is
        told by the bee's thread at its end: take it off the registry, then tell the
        others."""
        if isinstance(message, StartBee):
            return self.host.seat(message.bee, self.actor_ref)
        if isinstance(message, BeeLeft):
            self.host.leave(message.seat)
            # the slot is free only now: the ending's NOTIFY may have woken the claimer
            # while it was still held, and it would then wait out a whole poll
            tell_left(self.names, message)
        return None

    def on_stop(self) -> None:
        self.host.disown(self.actor_ref)
        self.host.sweep()

    def on_failure(self, *_: Any) -> None:
        self.host.disown(self.actor_ref)
