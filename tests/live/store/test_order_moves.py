"""Every writer of `queen_dispatch` is held to the state table (RULES 4): a new attempt
replaces only a row the table lets go again, an ending lands only on a running attempt,
and the reapers end only running ones."""

import psycopg
import pytest

from hive.rules.states import (
    ACCEPT,
    EMPTY,
    ENDED,
    ESCALATE,
    NONE,
    REAPED,
    REFUSED,
    RELEASED,
    RUNNING,
    SENDBACK,
    STALE,
    WAIT,
    State,
)
from hive.store import orders
from hive.store.orders import Insertion, NewOrder, OrderEnding

from .conftest import queue

# the row each state is read from: (outcome, review_state) of a started, ended attempt
ENDED_AS = {
    REFUSED: ("refused", None),
    ENDED: ("finished", None),
    WAIT: ("finished", "wait"),
    ACCEPT: ("finished", "accept"),
    SENDBACK: ("finished", "sendback"),
    ESCALATE: ("finished", "escalate"),
    EMPTY: ("finished", "empty"),
    STALE: ("finished", "stale"),
    REAPED: ("reaped at boot", None),
    RELEASED: ("ended badly", None),
}
REPLACED = {REFUSED, SENDBACK, STALE, REAPED, RELEASED}


def state_now(conn: psycopg.Connection, issue: int) -> State:
    row = conn.execute(
        "SELECT hive.order_state(started, finished_at, outcome, review_state)"
        " FROM hive.queen_dispatch WHERE issue = %s",
        (issue,),
    ).fetchone()
    assert row is not None
    return State(row[0])


def order_in(conn: psycopg.Connection, issue: int, state: State) -> orders.Order:
    """An order of `issue` in `state`, written as its writers leave it (the review
    columns by hand: the reviewer's own writers are tested elsewhere)."""
    if state == NONE:
        conn.execute(
            "INSERT INTO hive.queen_dispatch (issue, branch, base, started, conversation_id)"
            " VALUES (%s, 'queen-1', 'main', false, gen_random_uuid())",
            (issue,),
        )
    else:
        made = queue(conn, issue)
        if state != RUNNING:
            outcome, review_state = ENDED_AS[state]
            assert orders.end(conn, OrderEnding(made.fence, outcome))
            conn.execute(
                "UPDATE hive.queen_dispatch SET review_state = %s WHERE issue = %s",
                (review_state, issue),
            )
    assert state_now(conn, issue) == state
    found = orders.get(conn, issue)
    assert found is not None
    return found


@pytest.mark.parametrize("state", [s for s in State if s != State.ILLEGAL], ids=lambda s: s.name)
def test_a_new_attempt_replaces_only_a_row_the_table_lets_go_again(conn, state):
    before = order_in(conn, 1, state)
    verdict = orders.insert(conn, NewOrder(1, "queen-1", "main"), queued=True)
    after = orders.get(conn, 1)
    assert after is not None
    if state in REPLACED:
        assert verdict is Insertion.WRITTEN
        assert (after.attempt, state_now(conn, 1)) == (before.attempt + 1, RUNNING)
        assert [a.snapshot["conversation_id"] for a in orders.history(conn, 1)] == [
            str(before.conversation_id)
        ]
    else:
        expected = Insertion.IN_FLIGHT if state in (NONE, RUNNING) else Insertion.HELD
        assert verdict is expected
        assert after == before and orders.history(conn, 1) == []


def test_the_replaceable_states_are_the_tables():
    assert set(orders.REPLACEABLE) == REPLACED
