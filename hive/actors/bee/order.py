"""The start of a bee, as a message and its reply.

A caller (the Queen's round, or a runner's claimer) gives a bee one `BeeOrder`. The
order names its ledger as data: the bee writes it itself, on its own thread, between
the turn's start and its first line. The bee then answers once, with a `StartReply`,
on the order's future: the caller waits on that future and runs no code of its own on
the bee's thread.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

import pykka

from hive.actors.bee.start import StartPlan
from hive.store.leases import Lease
from hive.store.orders import Fence, NewOrder


@dataclass(frozen=True)
class InsertOrder:
    """The Queen's ledger: insert `new` under her `lease`."""

    new: NewOrder
    lease: Lease


@dataclass(frozen=True)
class MarkStarted:
    """A runner's ledger: reset the claimed row's `dispatched_at`, fenced."""


Ledger = InsertOrder | MarkStarted


class Start(Enum):
    """How a bee's start ended."""

    RUNNING = "running"  # the ledger landed: the row is this bee's and its turn runs
    IN_FLIGHT = "in flight"  # the Queen's insert: an unfinished order of the issue exists
    HELD = "held"  # the Queen's insert: the last attempt's state lets none replace it
    LEASE_GONE = "lease gone"  # the Queen's insert: her lease no longer holds
    TAKEN = "taken"  # a runner's ledger: the row is no longer its claim
    FAILED = "failed"  # the cut or the turn did not start, or the ledger raised


@dataclass(frozen=True)
class StartReply:
    """A bee's one answer to its order. `detail` is the bee's words for FAILED."""

    start: Start
    detail: str = ""


@dataclass(frozen=True)
class BeeOrder:
    """One order for a bee: its fence (runner None: the Queen's own), what to start, its
    ledger, and the future the bee answers on."""

    fence: Fence
    plan: StartPlan
    ledger: Ledger = field(default_factory=MarkStarted)
    key_index: int | None = None  # the order's key (its spend is counted by key)
    sells: bool = False  # the order names a credit account: its ending sells the turn
    reply: pykka.Future[StartReply] = field(
        default_factory=pykka.ThreadingFuture, compare=False, repr=False
    )
