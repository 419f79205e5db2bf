"""The credit ledger on a real PostgreSQL: grants land as lots, a turn is sold with its
order's ending in one transaction and never twice, lots burn their remainder once, and
the balance is always the ledger's grants less its sales and burns."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hive.actors.bee import ending as ending_module
from hive.actors.bee.ending import Accounting, end_and_sell
from hive.actors.reviewer.inputs import settle
from hive.agents.base import Ending, TurnOutcome
from hive.agents.protocol import Usage
from hive.metrics import HiveMetrics
from hive.rules.credits import Kind, apply, replay, take
from hive.rules.spend import Cost, CostSource
from hive.rules.states import Outcome
from hive.store import credits, orders, spend
from hive.store.credits import Sale
from hive.store.db import connection
from hive.store.endings import OrderEnding
from hive.store.issues import ISSUES_CHANNEL
from hive.store.listen import Listener
from hive.store.orders import NewOrder
from hive.store.reviews import ReviewRow

DAY = timedelta(days=1)
WAIT_SECONDS = 10.0


def sums(conn: Any, account: str) -> dict[str, int]:
    rows = conn.execute(
        "SELECT kind, sum(tokens) FROM hive.queen_credit_ledger WHERE account = %s GROUP BY kind",
        (account,),
    ).fetchall()
    return {kind: int(total) for kind, total in rows}


def sell(db: Any, turn: str, usd: float | None, account: str = "team", **kw: Any) -> Any:
    with connection(db) as conn, conn.transaction():
        return credits.sell(conn, Sale(turn, account, 1, usd, Decimal(2), **kw))


def claimed_order(conn: Any, issue: int, account: str | None, owner: str | None = None) -> Any:
    new = NewOrder(
        issue,
        f"queen-{issue}",
        "main",
        key_index=0,
        credit_account=account,
        credit_markup=None if account is None else Decimal(2),
        key_owner=owner,
    )
    assert orders.insert(conn, new, queued=True) is orders.Insertion.WRITTEN
    got = orders.claim(conn, "runner-a")
    assert got is not None and got.credit_account == account
    return got


def finished(fence: Any, usd: float | None) -> OrderEnding:
    cost = None if usd is None else Cost(usd, CostSource.AGENT)
    return OrderEnding(fence, Outcome.FINISHED, cost=cost)


def test_a_grant_lands_as_a_lot_that_burns_its_days_later_and_wakes_the_queen(
    db: Any, hive_db_url: str
) -> None:
    with Listener(hive_db_url, channels=(ISSUES_CHANNEL,)) as queen:
        credits.grant(db, "team", 100, Decimal(30), "first")
        assert queen.wait(WAIT_SECONDS).payloads == ("credit:team",)
    (row,) = credits.history(db, "team")
    assert (row["kind"], row["tokens"], row["note"]) == ("grant", 100, "first")
    assert row["burns_at"] - row["at"] == 30 * DAY
    assert credits.book(db, "team", datetime.now(UTC)).balance == 100


def test_a_sale_takes_from_the_oldest_lot_first_and_owes_what_none_covers(db: Any) -> None:
    credits.grant(db, "team", 10, Decimal(30))
    credits.grant(db, "team", 10, Decimal(30))
    first = sell(db, "bee:a", 0.035)  # $0.035 x 2 = 14 half-cents
    assert (first.tokens, first.overdrawn) == (14, 0)
    book = credits.book(db, "team", datetime.now(UTC))
    assert [lot.left for lot in book.lots] == [0, 6]
    second = sell(db, "bee:b", 0.02)  # 8 tokens; 6 left: overdrawn by 2
    assert (second.tokens, second.overdrawn) == (8, 2)
    assert credits.book(db, "team", datetime.now(UTC)).balance == -2
    (row, *_) = credits.history(db, "team")
    assert (row["overdrawn"], row["cost_micros"], row["markup"]) == (2, 20_000, Decimal(2))


def test_an_unpriced_turn_is_sold_at_one_token_and_says_so(db: Any) -> None:
    credits.grant(db, "team", 5, Decimal(30))
    assert sell(db, "bee:u", None).tokens == 1
    (row, *_) = credits.history(db, "team")
    assert row["cost_micros"] is None and row["tokens"] == 1


def test_a_turn_is_sold_once_however_often_it_is_sold(db: Any) -> None:
    credits.grant(db, "team", 50, Decimal(30))
    assert sell(db, "bee:x", 0.01).written
    again = sell(db, "bee:x", 0.01)
    assert not again.written and again.tokens == 0
    with connection(db) as conn:
        assert sums(conn, "team") == {"grant": 50, "sale": 4}


def test_lending_a_key_earns_nothing(db: Any) -> None:
    """A turn on alice's key is paid by the issue's account; alice gains no token."""
    with connection(db) as conn:
        got = claimed_order(conn, 1, "team", owner="alice")
    credits.grant(db, "team", 20, Decimal(30))
    moved, sold = end_and_sell(db, finished(got.fence, 0.02))
    assert moved.landed and sold is not None and sold.tokens == 8
    now = datetime.now(UTC)
    assert credits.book(db, "team", now).balance == 12
    assert credits.book(db, "alice", now).balance == 0
    assert credits.history(db, "alice") == []
    (sale, *_) = credits.history(db, "team")
    assert (sale["key_owner"], sale["key_index"]) == ("alice", 0)


def test_an_ending_and_its_sale_land_together_and_a_redelivered_ending_sells_nothing(
    db: Any,
) -> None:
    with connection(db) as conn:
        got = claimed_order(conn, 1, "team")
    credits.grant(db, "team", 20, Decimal(30))
    moved, sold = end_and_sell(db, finished(got.fence, 0.01))
    assert moved.landed and sold is not None and sold.tokens == 4
    moved, sold = end_and_sell(db, finished(got.fence, 0.01))  # delivered again
    assert not moved.landed and sold is None
    with connection(db) as conn:
        assert sums(conn, "team") == {"grant": 20, "sale": 4}
        order = orders.get(conn, 1)
    assert order is not None and order.outcome == "finished"


def test_an_order_written_with_credits_off_sells_nothing(db: Any) -> None:
    with connection(db) as conn:
        got = claimed_order(conn, 1, None)
    moved, sold = end_and_sell(db, finished(got.fence, 0.5))
    assert moved.landed and sold is None
    assert credits.accounts(db) == []


def test_a_sale_that_fails_takes_its_ending_with_it_and_the_retry_lands_both_once(
    db: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Queen killed (or the store gone) between the ending and its sale: neither
    lands; the retried ending lands both, once."""
    with connection(db) as conn:
        got = claimed_order(conn, 1, "team")
    credits.grant(db, "team", 20, Decimal(30))
    real = credits.sell

    def dies(conn: psycopg.Connection[Any], sale: Sale, **kw: Any) -> Any:
        raise RuntimeError("killed mid-write")

    monkeypatch.setattr(credits, "sell", dies)
    with pytest.raises(RuntimeError):
        end_and_sell(db, finished(got.fence, 0.01))
    with connection(db) as conn:
        order = orders.get(conn, 1)
        assert order is not None and order.finished_at is None
        assert sums(conn, "team") == {"grant": 20}
    monkeypatch.setattr(credits, "sell", real)
    moved, sold = end_and_sell(db, finished(got.fence, 0.01))
    assert moved.landed and sold is not None and sold.tokens == 4


def test_a_connection_cut_mid_sale_is_ended_again_and_sold_once(
    db: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The store's connection dies inside the ending's transaction (as in a PostgreSQL
    restart): the ending's retry loop ends and sells again on a new connection, once."""
    with connection(db) as conn:
        got = claimed_order(conn, 1, "team")
    credits.grant(db, "team", 20, Decimal(30))
    real = credits.sell
    cut: list[bool] = []

    def cut_once(conn: psycopg.Connection[Any], sale: Sale, **kw: Any) -> Any:
        if not cut:
            cut.append(True)
            conn.execute("SELECT pg_terminate_backend(pg_backend_pid())")
        return real(conn, sale, **kw)

    monkeypatch.setattr(credits, "sell", cut_once)
    monkeypatch.setattr(ending_module, "END_RETRY_FIRST_SECONDS", 0.05)
    moved, sold = ending_module.write_ending(db, finished(got.fence, 0.01), True)
    assert cut and moved.landed and sold is not None and sold.tokens == 4
    with connection(db) as conn:
        assert sums(conn, "team") == {"grant": 20, "sale": 4}


def test_a_lot_past_its_days_burns_its_remainder_once(db: Any) -> None:
    t0 = datetime.now(UTC)
    credits.grant(db, "team", 10, Decimal(1), now=t0)
    credits.grant(db, "team", 10, Decimal(3), now=t0)
    with connection(db) as conn, conn.transaction():
        credits.sell(conn, Sale("bee:s", "team", 1, 0.01, Decimal(2)), now=t0)  # 4 tokens
    later = t0 + 2 * DAY
    assert credits.accounts_due(db, later) == ["team"]
    assert credits.book(db, "team", later).balance == 10  # what a reader sees at once
    assert credits.burn_due(db, ["team"], now=later) == 6
    assert credits.burn_due(db, ["team"], now=later) == 0
    assert credits.accounts_due(db, later) == []
    with connection(db) as conn:
        assert sums(conn, "team") == {"grant": 20, "sale": 4, "burn": 6}
    assert credits.book(db, "team", later).balance == 10


STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("grant"), st.integers(0, 300), st.integers(1, 10)),
        st.tuples(st.just("sale"), st.integers(0, 40_000), st.just(0)),  # micro-dollars
        st.tuples(st.just("clock"), st.integers(0, 5 * 86400), st.just(0)),
    ),
    max_size=12,
)


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(steps=STEPS)
def test_the_stored_balance_is_grants_less_sales_less_burns_and_no_lot_goes_negative(
    db: Any, steps: list[tuple[str, int, int]]
) -> None:
    account = f"acct-{uuid.uuid4().hex[:8]}"
    now = datetime.now(UTC)
    for kind, amount, days in steps:
        if kind == "clock":
            now += timedelta(seconds=amount)
        elif kind == "grant":
            credits.grant(db, account, amount, Decimal(days), now=now)
        else:
            with connection(db) as conn, conn.transaction():
                sale = Sale(f"bee:{uuid.uuid4()}", account, None, amount / 1e6, Decimal(2))
                credits.sell(conn, sale, now=now)
    credits.burn_due(db, [account], now=now)
    with connection(db) as conn:
        total = sums(conn, account)
    book = replay(credits.movements(db, [account])[account])
    assert book.balance == total.get("grant", 0) - total.get("sale", 0) - total.get("burn", 0)
    assert (book.granted, book.sold, book.burned) == (
        total.get(Kind.GRANT, 0),
        total.get(Kind.SALE, 0),
        total.get(Kind.BURN, 0),
    )
    assert all(0 <= lot.left <= lot.granted for lot in book.lots)
    assert all(lot.burned for lot in book.lots if lot.burns_at <= now)
    # no sale took from a lot past its burn time: each movement burned what was due first
    moves = credits.movements(db, [account], every_row=True)[account]
    assert replay(moves) == book  # the summed runs of sales replay as the rows do
    seen = replay([])
    for move in moves:
        if move.kind is Kind.SALE:
            _, taken = take(seen.lots, move.tokens)
            by_id = {lot.id: lot for lot in seen.lots}
            assert all(by_id[lot].burns_at > move.at for lot, _ in taken.parts)
        seen = apply(seen, move)


def review_row(issue: int, conversation_id: uuid.UUID) -> ReviewRow:
    return ReviewRow(
        issue, conversation_id, 1, f"queen-{issue}", "main", None, [], None, 0, 0, 0, None, 0,
        0, None, "t", "", [], None, None,
    )  # fmt: skip


def test_each_review_turn_is_sold_with_its_spend_on_its_own_row(db: Any) -> None:
    with connection(db) as conn:
        got = claimed_order(conn, 1, "team")
        free = claimed_order(conn, 2, None)
    credits.grant(db, "team", 100, Decimal(30))
    assert end_and_sell(db, finished(got.fence, 0.01))[1] is not None  # the bee: 4 tokens
    metrics = HiveMetrics()
    usage = Usage("anthropic", "claude-sonnet-4-5", 10, 20, cost_usd=0.05)
    for _ in range(2):  # two reviews of one attempt: two sales of 20 tokens
        row = review_row(1, got.conversation_id)
        settle(db, row, Ending(TurnOutcome.FINISHED, 1.0, usage=usage), metrics, Accounting())
    settle(
        db,
        review_row(1, got.conversation_id),
        Ending(TurnOutcome.FINISHED, 1.0),
        metrics,
        Accounting(),
    )
    sold = [(s["turn"].split(":")[0], s["tokens"]) for s in credits.sales_of_issue(db, 1)]
    assert sold == [("bee", 4), ("review", 20), ("review", 20), ("review", 1)]  # 1: unpriced
    order = orders.get(db, 1)
    assert order is not None and order.cost_usd == pytest.approx(0.01)  # its bee's turn
    assert spend.of_issue(db, 1).cost_usd == pytest.approx(0.11)  # the reviews on their rows
    settle(db, review_row(2, free.conversation_id), Ending(TurnOutcome.FINISHED, 1.0, usage=usage),
           metrics, Accounting())  # fmt: skip
    assert credits.sales_of_issue(db, 2) == []
