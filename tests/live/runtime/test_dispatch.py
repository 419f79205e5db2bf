"""Writing one order: the insert's verdict is the round's answer, asked of the store once."""

from __future__ import annotations

import pytest

from hive.actors.queen.dispatch import Dispatched, dispatch, new_order
from hive.git.repo import resolve
from hive.rules.keys import key_slots
from hive.runtime import queen_ports
from hive.store import issues, leases, orders
from tests.live.runtime.conftest import eventually, queue


@pytest.mark.parametrize("elsewhere", [True, False])
def test_an_issue_whose_order_is_in_flight_is_not_written_and_the_answer_says_why(
    make_runtime, elsewhere
):
    rt = make_runtime()
    queue(rt, 1)  # the issue's order, in flight
    before = orders.get(rt.db, 1)
    lease = leases.claim(rt.db, leases.QUEEN_LEASE, "queen-a", 180)
    issue = issues.get(rt.db, 1)
    [key] = key_slots(rt.settings.worker_keys)
    assert lease is not None and issue is not None
    new = new_order(rt.checkout.base, issue, key, resolve(rt.checkout.repo, "main"), "", "")
    answer = dispatch(queen_ports(rt), new, issue, key, lease, elsewhere=elsewhere, bee=rt.bee)
    assert answer.code is Dispatched.IN_FLIGHT and not answer.counts
    assert answer.words() == "an unfinished order of it already exists"
    assert orders.get(rt.db, 1) == before
    eventually(lambda: rt.host.running() == 0)  # local mode: its bee was stopped
