"""The Queen writes one order (DESIGN 5.1), under her lease's fence (RULES 3).

Elsewhere mode inserts it with `queued_at` and the brief (the store NOTIFYs the runners)
and runs nothing; local mode starts its bee here through the bee pool and the shared
cut-and-start, the insert being its ledger. Every insert carries the fence of the Queen
lease the round holds, taken when the round took the lease: a round abandoned past its
bound, or a lease another Queen took meanwhile, writes nothing. A bee's turn starts
before its insert (the row exists before anything can close it) and is stopped when the
insert is refused, so local mode first checks that the lease still holds and starts no
bee once it does not. `LEASE_GONE` says so; the round then stops dispatching.
"""

from __future__ import annotations

import logging

from hive.actors import facts
from hive.actors.bee import START_WAIT_SECONDS, Bee, BeeConfig, BeeOrder
from hive.actors.runtime import Runtime
from hive.actors.start import plan_of
from hive.rules.credits import Terms, owner_of, payer
from hive.rules.keys import KeySlot
from hive.store import leases, orders
from hive.store.issues import Issue
from hive.store.leases import Lease
from hive.store.orders import Fence, Insertion, NewOrder

log = logging.getLogger("hive.queen")

LEASE_GONE = (
    "the Queen lease is gone (another Queen took it, or it ran out): the order was not"
    " written and this round dispatches nothing more"
)
IN_FLIGHT = "an unfinished order of it already exists"
HELD = "its last attempt's state lets no new attempt replace it"


def dispatch(
    rt: Runtime,
    new: NewOrder,
    issue: Issue,
    key: KeySlot,
    lease: Lease,
    *,
    elsewhere: bool,
    bee: BeeConfig,
) -> str | None:
    """Write `new` under `lease` (and start its bee here unless `elsewhere`): None once it
    is written (or its bee is still starting), else a sentence (`LEASE_GONE` when the
    lease no longer holds)."""
    if elsewhere:
        return _problem(orders.insert(rt.db, new, queued=True, lease=lease))
    plan = plan_of(
        bee.start,
        issue=issue.number,
        title=issue.title,
        body=issue.body,
        base=new.base,
        base_sha=new.base_sha,
        boundary=new.owned_paths,
        brief=new.brief or "",
        key=key.value,
    )
    fence = Fence(issue.number, new.conversation_id, None)
    written: list[Insertion] = []  # what the ledger's insert said, once it ran

    def ledger() -> bool:
        written.append(orders.insert(rt.db, new, queued=False, lease=lease))
        return written[-1] is Insertion.WRITTEN

    if not leases.held(rt.db, lease):
        return LEASE_GONE  # its turn would start before its insert is refused: not at all
    sells = new.credit_account is not None
    order = BeeOrder(fence, plan, ledger=ledger, key_index=new.key_index, sells=sells)
    started = Bee(rt, order, bee)
    if not rt.host.start(started):
        return "no bee can start in this process now"
    if not started.wait_decided(START_WAIT_SECONDS):
        # still starting (the git lock or the store is slow): it may land yet, so it
        # counts as dispatched and its files and key stay taken for this round
        log.warning(
            "its bee is still starting: counted as dispatched", extra={"issue": issue.number}
        )
        return None
    if started.landed:
        return None
    if started.start_error is not None:
        return started.start_error
    return _problem(written[-1]) if written else "its bee failed before its order was written"


def new_order(
    rt: Runtime,
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
        branch=f"queen-{issue.number}",
        base=rt.checkout.base,
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


def _problem(insertion: Insertion) -> str | None:
    """The round's sentence for what an insert did: None once it wrote the order."""
    return _PROBLEMS.get(insertion)


_PROBLEMS = {
    Insertion.IN_FLIGHT: IN_FLIGHT,
    Insertion.HELD: HELD,
    Insertion.LEASE_GONE: LEASE_GONE,
}
