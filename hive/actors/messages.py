"""What the hive's actors tell one another, and the names they are found by.

Every message is told, never asked, to a registered name in the runtime's
`supervisors.Registry`. A message to a name nothing holds now is dropped. So each
message is a hint that something happened, never the only record of it; the store is
the record. The bee host's two messages (`StartBee`, `BeeLeft`) go to the `HostActor`'s
own reference instead, which the host holds (`hive.actors.bee.host`). They change the
work registry.

    message        sender                                      receiver
    OrderEnded     the HostActor, once a bee whose order has   QUEEN: rounds at once
                   ended has left the work registry
    OrdersReaped   the reaper (boot or stall pass)             QUEEN: rounds at once
    TreeStarted    the DrainActor, started last                QUEEN: rounds at once
    BootReaped     the reaper, once its boot pass ran          QUEEN: decides from now on
    IssuesChanged  code that changed issues in this process    QUEEN: rounds at once
                   (`hive.tree.Hive.issues_changed`)
    StartBee       the Queen or the claimer (asked, for up to  the HostActor: starts a bee
                   START_ASK_SECONDS)
    BeeLeft        a bee's thread, once the bee has ended      the HostActor: takes it off
                                                               the work registry, then
                                                               tells OrderEnded, SlotFree
    SlotFree       the HostActor, once a bee has left the      CLAIMER: fills the slot
                   work registry
    DrainBegan     the DrainActor, on SIGTERM                  CLAIMER: reports draining
    WorkLeft       the work registry, as an item leaves it     DRAIN: steps at once
    BeeDone        a bee's thread, once the bee has ended      its own BeeActor: stops
    ReapAtBoot     the Queen, holding the lease for the first  REAPER: a boot pass at once
                   time (and each round until BootReaped)
    OrderEnded     (as above)                                  REVIEWER: reviews at once
    JobsReady      the reviewer, once it accepted work         JOBS: runs jobs at once
                   (and the GitHub webhook, once it woke a job)
    JobSlotFree    a job's run, once it ended (`hive.jobs.pool`)   JOBS: claims the next
    IssuesChanged  (as above)                                  FORGE: its watch looks now

A receiver's handler only wakes its loop (`hive.actors.loop`) or sets a flag. The work
the message calls for runs beside the actor, never in the handler.
"""

from __future__ import annotations

from dataclasses import dataclass

QUEEN = "queen"
CLAIMER = "claimer"
DRAIN = "drain"
REVIEWER = "reviewer"
JOBS = "jobs"
FORGE = "forge"
REAPER = "reaper"


@dataclass(frozen=True)
class OrderEnded:
    """An order run in this process has ended: its files and key are free."""

    issue: int


@dataclass(frozen=True)
class OrdersReaped:
    """The reaper ended or released these orders: their issues are free."""

    issues: tuple[int, ...]


@dataclass(frozen=True)
class ReapAtBoot:
    """The Queen holds the lease for the first time: end the orders her last run left."""


@dataclass(frozen=True)
class BootReaped:
    """The boot pass ran (it ended these orders): the Queen may decide."""

    issues: tuple[int, ...] = ()


@dataclass(frozen=True)
class TreeStarted:
    """Every child of the tree is up (the bee pool too)."""


@dataclass(frozen=True)
class IssuesChanged:
    """Issues were added or changed in this process: a round need not wait for the tick."""


@dataclass(frozen=True)
class SlotFree:
    """A bee has left the work registry: its slot is free."""

    issue: int


@dataclass(frozen=True)
class BeeLeft:
    """A bee has ended. The host takes seat `seat` off the work registry. Then it tells
    the Queen and the reviewer `OrderEnded` (when `order_ended`), and the claimer
    `SlotFree`."""

    issue: int
    seat: int
    order_ended: bool


@dataclass(frozen=True)
class DrainBegan:
    """The drain began: nothing more starts here."""


@dataclass(frozen=True)
class WorkLeft:
    """A piece of work ended and left the registry."""

    work_id: str


@dataclass(frozen=True)
class BeeDone:
    """The bee has ended its order (or never started it): its actor stops."""

    issue: int


@dataclass(frozen=True)
class JobsReady:
    """A job was created or woken in this process: the job runner need not wait its poll."""


@dataclass(frozen=True)
class JobSlotFree:
    """A job's run in this process ended: a slot is free for the next due job."""


QUEEN_WAKES = (OrderEnded, OrdersReaped, TreeStarted, IssuesChanged, BootReaped)
REAPER_WAKES = (ReapAtBoot,)
REVIEWER_WAKES = (OrderEnded, TreeStarted)
JOBS_WAKES = (JobsReady, JobSlotFree, TreeStarted)
FORGE_WAKES = (TreeStarted, IssuesChanged)
CLAIMER_WAKES = (SlotFree, DrainBegan)
