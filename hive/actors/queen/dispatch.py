"""The Queen writes one order (DESIGN 5.1) under her lease's fence (RULES 3).

`dispatch` runs in the Queen's round, once per planned order. In elsewhere mode it
inserts the order as queued and starts nothing: a runner claims it. In local mode it
starts a bee here and sends it the insert as the bee's ledger. The bee cuts the
worktree, starts the turn, writes the insert, and answers with a `StartReply`; the
round waits for that answer up to START_WAIT_SECONDS. The turn starts before its
insert, so local mode first checks that the lease still holds.

Each insert carries the fence of the lease the round holds. Once that lease is gone
(another Queen took it, or the round was abandoned) nothing is written, and
`Dispatched.LEASE_GONE` tells the round to stop. A raise is a store error: the round
fails, and the next round tries again.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from enum import Enum
from typing import Any, Protocol

import pykka
from psycopg_pool import ConnectionPool

from hive.actors.bee.bee import Bee
from hive.actors.bee.config import BeeConfig, BeePorts
from hive.actors.bee.host import BeeHost
from hive.actors.bee.order import BeeOrder, InsertOrder, Start, StartReply
from hive.actors.bee.start import plan_of
from hive.actors.queen import facts
from hive.rules.branches import branch_name
from hive.rules.credits import Terms, owner_of, payer
from hive.rules.keys import KeySlot
from hive.store import leases, orders
from hive.store.issues import Issue
from hive.store.leases import Lease
from hive.store.orders import Fence, Insertion, NewOrder

log = logging.getLogger("hive.queen")

# how long a round waits for its bee's answer
START_WAIT_SECONDS = 60.0


class DispatchPorts(Protocol):
    """What a dispatch uses: the store, the bee host, and what its bee uses."""

    @property
    def db(self) -> ConnectionPool[Any]: ...

    @property
    def host(self) -> BeeHost: ...

    @property
    def bees(self) -> BeePorts: ...


class Dispatched(Enum):
    """What writing one order came to."""

    WRITTEN = "written"  # the order is written (queued, or its bee's turn runs)
    STARTING = "starting"  # its bee has not answered yet: it counts as dispatched
    IN_FLIGHT = "in flight"  # an unfinished order of the issue exists
    HELD = "held"  # the last attempt's state lets no new attempt replace it
    LEASE_GONE = "lease gone"  # the lease no longer holds: the round dispatches no more
    NO_BEE = "no bee"  # no bee pool here, or the drain began
    FAILED = "failed"  # its bee could not start (the reply's detail says why)


@dataclass(frozen=True)
class Dispatch:
    """`dispatch`'s answer: a code, and for FAILED the bee's words."""

    code: Dispatched
    detail: str = ""

    @property
    def counts(self) -> bool:
        """The order counts as dispatched this round (its files and key are taken)."""
        return self.code in (Dispatched.WRITTEN, Dispatched.STARTING)

    def words(self) -> str:
        """The round report's words for an order not started."""
        return self.detail or _WORDS[self.code]


def dispatch(
    rt: DispatchPorts,
    new: NewOrder,
    issue: Issue,
    key: KeySlot,
    lease: Lease,
    *,
    elsewhere: bool,
    bee: BeeConfig,
) -> Dispatch:
    """Write `new` under `lease`; in local mode, by its own bee (see the module)."""
    if elsewhere:
        return Dispatch(_INSERTED[orders.insert(rt.db, new, queued=True, lease=lease)])
    if not leases.held(rt.db, lease):
        # its turn would start before its insert is refused: not at all
        return Dispatch(Dispatched.LEASE_GONE)
    plan = plan_of(
        bee.start,
        issue=new.issue,
        title=issue.title,
        body=issue.body,
        base=new.base,
        base_sha=new.base_sha,
        boundary=new.owned_paths,
        brief=new.brief or "",
        key=key.value,
    )
    order = BeeOrder(
        Fence(new.issue, new.conversation_id, None),
        plan,
        InsertOrder(new, lease),
        key_index=new.key_index,
        sells=new.credit_account is not None,
    )
    if not rt.host.start(Bee(rt.bees, order, bee)):
        return Dispatch(Dispatched.NO_BEE)
    try:
        reply: StartReply = order.reply.get(timeout=START_WAIT_SECONDS)
    except pykka.Timeout:
        # still starting (the git lock or the store is slow): it may land yet, so it
        # counts as dispatched and its files and key stay taken for this round
        log.warning("its bee is still starting: counted as dispatched", extra={"issue": new.issue})
        return Dispatch(Dispatched.STARTING)
    return Dispatch(_STARTED[reply.start], reply.detail)


def new_order(
    base: str,
    issue: Issue,
    key: KeySlot,
    base_sha: str,
    provider: str,
    model: str,
    sendback_note: str = "",
    credits: Terms | None = None,
) -> NewOrder:
    """The Queen's decision for `issue` on `key`, judged against `base_sha`; its brief
    carries `sendback_note`, the review's notes when the last attempt was sent back.
    With `credits` (on), it names the account its turns are sold to, the markup, and
    who lent its key."""
    return NewOrder(
        issue=issue.number,
        branch=branch_name(issue.number),
        base=base,
        base_sha=base_sha,
        owned_paths=tuple(issue.boundary),
        key_index=key.index,
        key_fingerprint=key.fingerprint,
        brief=facts.brief_of(issue, sendback_note),
        provider=provider,
        model=model or None,
        credit_account=None if credits is None else payer(issue.account, credits.default_account),
        credit_markup=None if credits is None else credits.markup,
        key_owner=None if credits is None else owner_of(credits.key_owners, key.index),
    )


_INSERTED = {
    Insertion.WRITTEN: Dispatched.WRITTEN,
    Insertion.IN_FLIGHT: Dispatched.IN_FLIGHT,
    Insertion.HELD: Dispatched.HELD,
    Insertion.LEASE_GONE: Dispatched.LEASE_GONE,
}

_STARTED = {
    Start.RUNNING: Dispatched.WRITTEN,
    Start.IN_FLIGHT: Dispatched.IN_FLIGHT,
    Start.HELD: Dispatched.HELD,
    Start.LEASE_GONE: Dispatched.LEASE_GONE,
    Start.TAKEN: Dispatched.FAILED,  # a runner's ledger: never the Queen's
    Start.FAILED: Dispatched.FAILED,
    Start.WITHDRAWN: Dispatched.NO_BEE,  # the round gave up on its start: never written
}

_WORDS = {
    Dispatched.IN_FLIGHT: "an unfinished order of it already exists",
    Dispatched.HELD: "its last attempt's state lets no new attempt replace it",
    Dispatched.NO_BEE: "no bee can start in this process now",
    Dispatched.FAILED: "its bee failed before its order was written",
}
