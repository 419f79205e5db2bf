"""A runner's group commit of endings: one alone is written at once, as always; endings
that come while one is being written go together in the next statement, each landing by
its own fence; a statement of several that fails hands each back to be written alone."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import pytest
from psycopg_pool import ConnectionPool

from hive.actors.ending_group import EndingGroup, Written
from hive.rules.spend import Cost, CostSource
from hive.rules.states import Outcome
from hive.store import credits, orders, pool
from hive.store.endings import OrderEnding
from hive.store.orders import Fence, NewOrder
from hive.store.pool import make_pool
from tests.live.runtime.conftest import eventually

RUNNER = "runner-a"
JOIN_SECONDS = 30.0


@pytest.fixture
def db(hive_db_url: str) -> Iterator[ConnectionPool[Any]]:
    made = make_pool(hive_db_url, max_size=6, name="group")
    try:
        yield made
    finally:
        made.close()


def claimed(db: ConnectionPool[Any], *issues: int) -> list[Fence]:
    for issue in issues:
        assert orders.insert(db, NewOrder(issue, f"queen-{issue}", "main"), queued=True)
    got = orders.claim_many(db, RUNNER, len(issues))
    return [g.fence for g in got]


class Writer(threading.Thread):
    """One bee's thread ending its order through the group."""

    def __init__(self, group: EndingGroup, ending: OrderEnding, sells: bool = False) -> None:
        super().__init__(daemon=True)
        self.group, self.ending, self.sells = group, ending, sells
        self.written: Written | None = None

    def run(self) -> None:
        self.written = self.group.write(self.ending, self.sells)

    def landed(self) -> bool:
        self.join(JOIN_SECONDS)
        assert self.written is not None, f"{self.ending.fence.issue} not written"
        return self.written[0].landed


def lock_waiters(db: ConnectionPool[Any]) -> int:
    with db.connection() as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_activity"
            " WHERE wait_event_type = 'Lock' AND datname = current_database()"
        ).fetchone()
    assert row is not None
    return int(row[0])


def written_while_the_first_waits(
    db: ConnectionPool[Any], hive_db_url: str, leader: Writer, others: list[Writer]
) -> None:
    """Hold issue 1's row so that `leader`'s statement waits on it, start `others` while
    it waits, and let the row go once all of them wait in the group."""
    with pool.connect(hive_db_url) as holder, holder.transaction():
        holder.execute("SELECT 1 FROM hive.queen_dispatch WHERE issue = 1 FOR UPDATE")
        leader.start()
        eventually(lambda: lock_waiters(db) == 1)  # its statement waits on the row
        for writer in others:
            writer.start()
        eventually(lambda: leader.group.waiting == len(others))


def test_an_ending_alone_is_written_at_once_by_itself(db: ConnectionPool[Any]) -> None:
    group = EndingGroup(db)
    (fence,) = claimed(db, 1)
    moved, sold = group.write(OrderEnding(fence, Outcome.FINISHED))
    assert moved.landed and sold is None
    assert list(group.statements) == []  # the single ending's own statement
    assert group.waiting == 0


def test_endings_that_come_while_one_is_written_go_together_each_by_its_fence(
    db: ConnectionPool[Any], hive_db_url: str
) -> None:
    group = EndingGroup(db)
    first, *rest = claimed(db, 1, 2, 3, 4)
    lost = Fence(rest[2].issue, rest[2].conversation_id, "runner-b")
    leader = Writer(group, OrderEnding(first, Outcome.FINISHED))
    others = [Writer(group, OrderEnding(f, Outcome.FINISHED)) for f in (rest[0], rest[1], lost)]
    written_while_the_first_waits(db, hive_db_url, leader, others)
    assert leader.landed()
    assert [w.landed() for w in others] == [True, True, False]
    assert list(group.statements) == [3]
    unfinished = orders.listing(db, unfinished_only=True)
    assert [(o.issue, o.claimed_by) for o in unfinished] == [(4, RUNNER)]


def test_a_statement_of_several_that_fails_hands_each_back_to_be_written_alone(
    db: ConnectionPool[Any], hive_db_url: str
) -> None:
    group = EndingGroup(db)
    first, second, third = claimed(db, 1, 2, 3)
    leader = Writer(group, OrderEnding(first, Outcome.FINISHED))
    # no bigint holds it: the statement of both fails, and alone it is written without
    # the agent's figures, as one ending always was
    too_big = OrderEnding(second, Outcome.FINISHED, input_tokens=2**70)
    others = [Writer(group, too_big), Writer(group, OrderEnding(third, Outcome.FINISHED))]
    written_while_the_first_waits(db, hive_db_url, leader, others)
    assert leader.landed()
    assert [w.landed() for w in others] == [True, True]
    assert list(group.statements) == []
    order = orders.get(db, 2)
    assert order is not None and order.input_tokens is None
    assert order.detail is not None and "figures were not stored" in order.detail


def test_a_lone_ending_of_another_bee_is_handed_back_to_it(
    db: ConnectionPool[Any], hive_db_url: str
) -> None:
    group = EndingGroup(db, most=1)  # one ending a statement: each goes alone
    first, second, third = claimed(db, 1, 2, 3)
    leader = Writer(group, OrderEnding(first, Outcome.FINISHED))
    others = [Writer(group, OrderEnding(f, Outcome.FINISHED)) for f in (second, third)]
    written_while_the_first_waits(db, hive_db_url, leader, others)
    assert leader.landed()
    assert [w.landed() for w in others] == [True, True]
    assert list(group.statements) == []
    assert orders.listing(db, unfinished_only=True) == []


def test_endings_written_together_sell_their_turns_in_the_same_transaction(
    db: ConnectionPool[Any], hive_db_url: str
) -> None:
    group = EndingGroup(db)
    credits.grant(db, "team", 100, Decimal(30))
    for issue in (1, 2, 3):
        new = NewOrder(
            issue, f"queen-{issue}", "main", credit_account="team", credit_markup=Decimal(2)
        )
        assert orders.insert(db, new, queued=True) is orders.Insertion.WRITTEN
    first, second, third = [g.fence for g in orders.claim_many(db, RUNNER, 3)]
    cost = Cost(0.01, CostSource.AGENT)  # 2 tokens at cost, 4 sold
    lost = Fence(third.issue, third.conversation_id, "runner-b")
    leader = Writer(group, OrderEnding(first, Outcome.FINISHED, cost=cost), sells=True)
    others = [
        Writer(group, OrderEnding(second, Outcome.FINISHED, cost=cost), sells=True),
        Writer(group, OrderEnding(lost, Outcome.FINISHED, cost=cost), sells=True),
    ]
    written_while_the_first_waits(db, hive_db_url, leader, others)
    assert leader.landed()
    assert [w.landed() for w in others] == [True, False]
    assert list(group.statements) == [2]
    sold = [w.written[1] for w in others if w.written is not None]
    assert sold[0] is not None and sold[0].tokens == 4 and sold[1] is None
    # two turns sold (the leader's alone, the second's together), the lost one not
    assert credits.book(db, "team", datetime.now(UTC)).balance == 100 - 8
