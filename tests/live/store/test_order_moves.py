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
    REAP_BOOT,
    REAP_STALL,
    REAPED,
    REFUSED,
    RELEASED,
    RUNNING,
    SENDBACK,
    STALE,
    WAIT,
    Outcome,
    State,
)
from hive.store import endings, orders, reaping
from hive.store.endings import OrderEnding
from hive.store.orders import Fence, Insertion, NewOrder

from .conftest import backdate, local, queue

# the row each state is read from: (outcome, review_state) of a started, ended attempt
ENDED_AS = {
    REFUSED: (Outcome.REFUSED, None),
    ENDED: (Outcome.FINISHED, None),
    WAIT: (Outcome.FINISHED, "wait"),
    ACCEPT: (Outcome.FINISHED, "accept"),
    SENDBACK: (Outcome.FINISHED, "sendback"),
    ESCALATE: (Outcome.FINISHED, "escalate"),
    EMPTY: (Outcome.FINISHED, "empty"),
    STALE: (Outcome.FINISHED, "stale"),
    REAPED: (Outcome.REAPED_AT_BOOT, None),
    RELEASED: (Outcome.ENDED_BADLY, None),
}
REPLACED = {REFUSED, SENDBACK, STALE, REAPED, RELEASED}


def state_now(conn: psycopg.Connection, issue: int) -> State:
    row = conn.execute(
        "SELECT hive.order_state(started, finished_at, outcome_code, review_state)"
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
            assert endings.end(conn, OrderEnding(made.fence, outcome))
            conn.execute(
                "UPDATE hive.queen_dispatch SET review_state = %s, review_failures = 2"
                " WHERE issue = %s",
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
        failures = conn.execute("SELECT review_failures FROM hive.queen_dispatch").fetchone()
        assert failures == (0,)  # a new attempt's reviews start counting again
        assert [a.snapshot["conversation_id"] for a in orders.history(conn, 1)] == [
            str(before.conversation_id)
        ]
    else:
        expected = Insertion.IN_FLIGHT if state in (NONE, RUNNING) else Insertion.HELD
        assert verdict is expected
        assert after == before and orders.history(conn, 1) == []


def test_the_replaceable_states_are_the_tables():
    assert set(orders.REPLACEABLE) == REPLACED


@pytest.mark.parametrize("state", [s for s in State if s != State.ILLEGAL], ids=lambda s: s.name)
def test_an_ending_lands_only_on_a_running_attempt_and_names_the_state_it_refused(
    conn, state, caplog
):
    before = order_in(conn, 1, state)
    moved = endings.end(conn, OrderEnding(Fence(1, before.conversation_id, None), Outcome.FINISHED))
    if state == RUNNING:
        assert moved.landed and state_now(conn, 1) == ENDED
        return
    assert not moved and moved.current_state == state and moved.illegal
    assert orders.get(conn, 1) == before
    assert f"event END from state {state.name}" in caplog.text


def test_an_ending_fenced_out_is_gone_not_illegal(conn):
    made = queue(conn, 1)
    moved = endings.end(conn, OrderEnding(Fence(1, made.conversation_id, "r9"), Outcome.FINISHED))
    assert not moved and not moved.illegal


def unstarted(conn: psycopg.Connection, issue: int, *, queued: bool) -> None:
    """An unfinished row that never started (NONE): the reapers' criteria find it, and
    no reap event may leave its state."""
    conn.execute(
        "INSERT INTO hive.queen_dispatch (issue, branch, base, started, conversation_id,"
        " queued_at, claimed_by, claimed_at, dispatched_at) VALUES (%s, 'q', 'main', false,"
        " gen_random_uuid(), CASE WHEN %s THEN now() END, CASE WHEN %s THEN 'r1' END,"
        " now() - interval '3 hours', now() - interval '3 hours')",
        (issue, queued, queued),
    )


def test_each_reaper_ends_running_rows_and_refuses_an_unstarted_one_by_name(conn, caplog):
    local(conn, 1)
    unstarted(conn, 2, queued=False)
    boot = reaping.reap_at_boot(conn)
    assert [o.issue for o in boot.ended] == [1]
    assert [(m.issue, m.event, m.current_state) for m in boot.refused] == [(2, REAP_BOOT, NONE)]
    assert "event REAP_BOOT from state NONE" in caplog.text
    conn.execute("DELETE FROM hive.queen_dispatch")
    queue(conn, 3)
    orders.claim(conn, "r1")
    conn.execute(
        "UPDATE hive.queen_dispatch SET claimed_at = now() - interval '1 hour',"
        " dispatched_at = now() - interval '3 hours'"
    )
    unstarted(conn, 4, queued=True)
    silent = reaping.reap_silent_runners(conn, 10)
    assert [o.issue for o in silent.ended] == [3]
    assert [(m.issue, m.event, m.current_state) for m in silent.refused] == [(4, REAP_STALL, NONE)]
    local(conn, 5)
    backdate(conn, 5, "dispatched_at", 180)
    stalled = reaping.reap_stalled_turns(conn, 120)
    assert [o.issue for o in stalled.ended] == [5]
    assert [(m.issue, m.current_state) for m in stalled.refused] == [(4, NONE)]
    assert state_now(conn, 4) == NONE
