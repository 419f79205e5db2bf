"""The start of a bee, as a message and its reply.

A caller (the Queen's round, or a runner's claimer) gives a bee one `BeeOrder`. The
order names its ledger as data. The bee writes it itself, on its own thread, between
the turn's start and its first line. The bee then answers once, with a `StartReply`, on
the order's future. The caller waits on that future and runs no code of its own on the
bee's thread.

A caller that gave up waiting for the bee's start withdraws the order (`StartGate`).
The bee commits to it just before its ledger. Whichever comes first holds. A withdrawn
bee writes nothing and leaves. A committed one runs its order to its end.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from enum import Enum

import pykka

from hive.actors.bee.start import StartPlan
from hive.store.leases import Lease
from hive.store.orders import Fence, NewOrder


@dataclass(frozen=True)
class InsertOrder:
    """The Queen's ledger. The bee inserts `new` under her `lease`."""

    new: NewOrder
    lease: Lease


@dataclass(frozen=True)
class MarkStarted:
    """A runner's ledger. The bee resets the claimed row's `dispatched_at`, fenced."""


Ledger = InsertOrder | MarkStarted


class Start(Enum):
    """How a bee's start ended."""

    RUNNING = "running"  # the ledger landed: the row is this bee's and its turn runs
    IN_FLIGHT = "in flight"  # the Queen's insert: an unfinished order of the issue exists
    HELD = "held"  # the Queen's insert: the last attempt's state lets none replace it
    LEASE_GONE = "lease gone"  # the Queen's insert: her lease no longer holds
    TAKEN = "taken"  # a runner's ledger: the row is no longer its claim
    FAILED = "failed"  # the cut or the turn did not start, or the ledger raised
    WITHDRAWN = "withdrawn"  # its caller gave up before the ledger: nothing was written


class Gate(Enum):
    OPEN = "open"
    COMMITTED = "committed"  # the bee is writing its ledger: it runs the order
    WITHDRAWN = "withdrawn"  # the caller gave up: the bee writes nothing


class StartGate:
    """Who settles a start the caller gave up on. It is thread-safe. The bee calls
    `commit` before its ledger. The caller calls `withdraw` once its wait ran out. Each
    succeeds only if the other has not, so exactly one of them wins."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._gate = Gate.OPEN

    def commit(self) -> bool:
        """The bee may write its ledger (the caller can no longer withdraw it)."""
        return self._move(Gate.COMMITTED)

    def withdraw(self) -> bool:
        """The bee will write nothing (it had not committed)."""
        return self._move(Gate.WITHDRAWN)

    @property
    def withdrawn(self) -> bool:
        with self._lock:
            return self._gate is Gate.WITHDRAWN

    def _move(self, to: Gate) -> bool:
        with self._lock:
            if self._gate is Gate.OPEN:
                self._gate = to
            return self._gate is to


@dataclass(frozen=True)
class StartReply:
    """A bee's one answer to its order. `detail` is the bee's words for FAILED."""

    start: Start
    detail: str = ""


@dataclass(frozen=True)
class BeeOrder:
    """One order for a bee. It holds its fence, what to start, its ledger and the future
    the bee answers on. A fence whose runner is None is the Queen's own bee's."""

    fence: Fence
    plan: StartPlan
    ledger: Ledger = field(default_factory=MarkStarted)
    key_index: int | None = None  # the order's key (its spend is counted by key)
    sells: bool = False  # the order names a credit account: its ending sells the turn
    reply: pykka.Future[StartReply] = field(
        default_factory=pykka.ThreadingFuture, compare=False, repr=False
    )
    gate: StartGate = field(default_factory=StartGate, compare=False, repr=False)
