"""A start the host answers too late: the Queen or the claimer gives up after
`start_ask_seconds` instead of waiting as long as the host is held (a stopping pool
held it for its whole stop). The bee it gave up on is withdrawn: if the host starts it
later it writes nothing and leaves its seat, and the order is not lost."""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Callable

from hive.actors.bee.bee import Bee
from hive.actors.bee.order import BeeOrder, Start
from hive.actors.queen.dispatch import Dispatched, dispatch, new_order
from hive.git.repo import resolve
from hive.git.worktrees import worktree_path
from hive.rules.keys import key_slots
from hive.runtime import queen_ports
from hive.store import issues, leases, orders
from hive.store.orders import Fence
from hive.testing import wait_for_ending
from tests.live.runtime.conftest import add_issue, eventually, queue
from tests.live.runtime.test_runner import claimer_of

ASK_SECONDS = 0.5
HELD_SECONDS = 30.0  # the host's hold, if nothing opens it first (the old code waits it)


def _hold_the_host(rt) -> tuple[threading.Event, list]:
    """Hold the host's thread in its next start, once the bee is admitted (where it fits
    the store pool to the bees running). Returns the opener and the bees it held."""
    opened = threading.Event()
    held: list = []

    def fit(running: int) -> None:
        if not held and running == 1:
            held.extend(rt.work.bees())
            opened.wait(HELD_SECONDS)

    rt.host.watch(fit)
    rt.host.start_ask_seconds = ASK_SECONDS
    return opened, held


def _late_bee_writes_nothing(rt, opened: threading.Event, held: list, issue: int) -> None:
    [bee] = held
    opened.set()  # the host starts the bee now, after its asker gave up
    assert bee.wait(10)
    assert bee.order.reply.get(timeout=0).start is Start.WITHDRAWN
    assert not bee.landed
    eventually(lambda: rt.host.running() == 0)  # its seat is free
    assert not worktree_path(rt.checkout.workdir, issue).exists()


def test_a_claim_whose_bee_the_host_starts_too_late_is_given_back(make_runtime):
    rt = make_runtime()
    opened, held = _hold_the_host(rt)
    queue(rt, 5)
    try:
        assert claimer_of(rt).run_once().started == ()
        order = orders.get(rt.db, 5)
        assert order is not None and order.claimed_by is None and order.finished_at is None
        _late_bee_writes_nothing(rt, opened, held, 5)
    finally:
        opened.set()
    order = orders.get(rt.db, 5)  # still queued, untouched by the late bee
    assert order is not None and order.claimed_by is None and order.finished_at is None
    assert claimer_of(rt).run_once().started == (5,)
    assert wait_for_ending(rt.db, 5).outcome == "finished"


def test_a_queens_bee_the_host_starts_too_late_writes_no_order(make_runtime):
    rt = make_runtime()
    opened, held = _hold_the_host(rt)
    add_issue(rt.db, 3)
    lease = leases.claim(rt.db, leases.QUEEN_LEASE, "queen-a", 180)
    issue = issues.get(rt.db, 3)
    [key] = key_slots(rt.settings.worker_keys)
    assert lease is not None and issue is not None
    new: Callable[[], object] = lambda: new_order(  # noqa: E731
        rt.checkout.base, issue, key, resolve(rt.checkout.repo, "main"), "", ""
    )
    try:
        answer = dispatch(queen_ports(rt), new(), issue, key, lease, elsewhere=False, bee=rt.bee)
        assert answer.code is Dispatched.NO_BEE and not answer.counts
        _late_bee_writes_nothing(rt, opened, held, 3)
    finally:
        opened.set()
    assert orders.get(rt.db, 3) is None
    again = dispatch(queen_ports(rt), new(), issue, key, lease, elsewhere=False, bee=rt.bee)
    assert again.code is Dispatched.WRITTEN
    assert wait_for_ending(rt.db, 3).outcome == "finished"


def test_a_start_given_up_before_the_host_reached_it_admits_no_bee(make_runtime):
    # the host is held in one start while a second waits behind it: both askers give up.
    # The second bee is never admitted (no seat, no start), and the order stays queued
    rt = make_runtime()
    opened, held = _hold_the_host(rt)
    admitted: list = []

    def seen(running: int) -> None:
        admitted.extend(bee for bee in rt.work.bees() if all(bee is not b for b in admitted))

    rt.host.watch(seen)
    queue(rt, 5)
    try:
        assert claimer_of(rt).run_once().started == ()  # the host holds #5's start
        # a second slot claims #5 again (given back, the oldest queued): its start waits
        assert claimer_of(rt, slots=2).run_once().started == ()
        opened.set()
        eventually(lambda: rt.host.running() == 0)
    finally:
        opened.set()
    order = orders.get(rt.db, 5)
    assert order is not None and order.claimed_by is None and order.finished_at is None
    # a next pass's start is answered after the withdrawn one's: the host has seen it
    assert claimer_of(rt).run_once().started == (5,)
    assert wait_for_ending(rt.db, 5).outcome == "finished"
    assert len(admitted) == 2 and admitted[0] is held[0]  # the first, and the last pass's


def _bee() -> Bee:
    return Bee(None, BeeOrder(Fence(1, uuid.uuid4(), "r"), None), None)  # type: ignore[arg-type]


def test_a_withdrawn_bee_writes_no_ledger_and_a_bee_past_its_ledger_cannot_be_withdrawn():
    late = _bee()
    assert late.withdraw() and late.withdrawn
    assert late._ledger() is False  # before any write: it has no store here
    assert late._ledger_said is Start.WITHDRAWN
    begun = _bee()
    assert begun.order.gate.commit()  # as its ledger does first
    assert not begun.withdraw() and not begun.withdrawn


def test_a_withdrawn_runners_bee_that_failed_to_start_ends_no_order(caplog):
    # its claim is its asker's to give back: ending it would need the store (none here)
    late = _bee()
    assert late.withdraw()
    with caplog.at_level(logging.WARNING, logger="hive.bee"):
        late._start_failed(RuntimeError("no worktree"))
    assert late.start_error == "could not start: no worktree"
    assert "could not end the order" not in caplog.text
