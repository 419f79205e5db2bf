"""The credit ledger (`queen_credit_ledger`, hive/rules/credits.py). Grants, sales and
burns are one row each; the books are read from them.

Every movement of an account runs in the caller's transaction, or in its own. It first
locks the account's row. So one account's rows are written one at a time, in id order,
and the replay reads them in that order. Before it writes, a movement burns the lots
whose time is up, one row each. So no sale takes from a lot past its burn time.

A sale is written with the fact it records. A bee's sale is written with its order's
ending, in the ending's transaction (`sell_order_turn`). The ledger holds one sale per
turn (a unique index). A redelivered ending, a retried transaction or a second seller
finds the turn sold and writes nothing.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

import psycopg

from hive.rules.credits import (
    Book,
    Kind,
    Movement,
    Terms,
    apply,
    as_of,
    burn_after,
    due_burns,
    micros_of,
    payer,
    replay,
    take,
    tokens_for,
)
from hive.store.db import Db, connection, dicts, one, one_dict
from hive.store.issues import Issue

HISTORY_LINES = 50


@dataclass(frozen=True)
class Sale:
    """One turn to sell. `turn` names it uniquely ('bee:<conversation id>' for a bee).
    It carries the account that pays, the issue, the cost in US dollars (None when
    unpriced) and the markup. It also carries the key it ran on and that key's owner,
    who earns nothing by it."""

    turn: str
    account: str
    issue: int | None
    cost_usd: float | None
    markup: Decimal
    key_index: int | None = None
    key_owner: str | None = None


@dataclass(frozen=True)
class Moved:
    """What one movement wrote. `tokens` is 0 when nothing was written because the turn
    was sold already. It also says what no lot covered and which lots it burned first."""

    tokens: int = 0
    overdrawn: int = 0
    burned: int = 0
    written: bool = False


def lock(conn: psycopg.Connection[Any], account: str) -> datetime:
    """Lock `account` for the rest of the transaction, making it on first use. Returns
    the store's clock once the lock is held."""
    row = one(conn, "lock_credit_account", {"account": account})
    assert row is not None, "the upsert answers its row"
    now: datetime = row[0]
    return now


def movements(
    db: Db, accounts: Iterable[str], *, every_row: bool = False
) -> dict[str, list[Movement]]:
    """The ledger of `accounts` as the replay reads it, by account. Each run of sales
    between two grants or burns comes as one sale of their sum. The replay is the same,
    and a ledger of a hundred thousand sales reads in milliseconds. With `every_row`,
    each row comes as it is."""
    found: dict[str, list[Movement]] = {a: [] for a in accounts}
    query = "credit_ledger_rows" if every_row else "credit_ledger"
    rows = dicts(db, query, {"accounts": sorted(found)})
    for r in rows:
        found[r["account"]].append(
            Movement(r["id"], Kind(r["kind"]), r["tokens"], r["at"], r["burns_at"], r["lot"])
        )
    return found


def books(db: Db, accounts: Iterable[str], now: datetime) -> dict[str, Book]:
    """Each account's book as it stands at `now` (lots due to burn are burned)."""
    return {a: as_of(replay(m), now) for a, m in movements(db, accounts).items()}


def book(db: Db, account: str, now: datetime) -> Book:
    return books(db, [account], now)[account]


def _settle(
    conn: psycopg.Connection[Any], account: str, now: datetime | None
) -> tuple[Book, datetime, int]:
    """Lock `account`, read its book and burn the lots due at `now` (None: the store's
    clock). Returns the book after, the time the movement is written at and the tokens
    burned."""
    clock = lock(conn, account)
    at = now or clock
    current = replay(movements(conn, [account])[account])
    burned = 0
    for lot, tokens in due_burns(current, at):
        params = {"account": account, "tokens": tokens, "at": at, "lot": lot}
        if one(conn, "insert_credit_burn", params) is not None:
            current = apply(current, Movement(0, Kind.BURN, tokens, at, lot=lot))
            burned += tokens
    return current, at, burned


def grant(
    db: Db,
    account: str,
    tokens: int,
    burn_days: Decimal,
    note: str | None = None,
    *,
    now: datetime | None = None,
) -> Moved:
    """Grant a lot of `tokens` to `account`; it burns `burn_days` later. The Queen is
    woken (NOTIFY) when it commits, because the account's waiting issues may now go.
    `now` stands in for the store's clock; tests move it."""
    with connection(db) as conn, conn.transaction():
        _, at, burned = _settle(conn, account, now)
        params = {
            "account": account,
            "tokens": tokens,
            "at": at,
            "burns_at": at + burn_after(burn_days),
            "note": note,
        }
        one(conn, "insert_credit_grant", params)  # its trigger wakes the Queen
    return Moved(tokens, 0, burned, True)


def sell(conn: psycopg.Connection[Any], sale: Sale, *, now: datetime | None = None) -> Moved:
    """Sell one turn, in the caller's transaction. The price is markup x cost, rounded
    up to a whole token; an unpriced turn costs the rules' UNPRICED_TOKENS. It takes
    from the oldest unburned lots first, and what they do not cover is owed. A turn sold
    already writes nothing."""
    current, at, burned = _settle(conn, sale.account, now)
    micros = None if sale.cost_usd is None else micros_of(sale.cost_usd)
    tokens = tokens_for(micros, sale.markup)
    _, taken = take(current.lots, tokens)
    params = {
        "account": sale.account,
        "tokens": tokens,
        "at": at,
        "turn": sale.turn,
        "issue": sale.issue,
        "cost_micros": micros,
        "markup": sale.markup,
        "overdrawn": taken.overdrawn,
        "key_index": sale.key_index,
        "key_owner": sale.key_owner,
    }
    if one(conn, "insert_credit_sale", params) is None:
        return Moved(0, 0, burned, False)
    return Moved(tokens, taken.overdrawn, burned, True)


def bee_turn(conversation_id: uuid.UUID) -> str:
    """The ledger's name of a bee's turn: its attempt's conversation id."""
    return f"bee:{conversation_id}"


def review_turn(conversation_id: uuid.UUID) -> str:
    """The ledger's name of one review turn of an attempt (each review its own)."""
    return f"review:{conversation_id}:{uuid.uuid4()}"


def sell_order_turn(
    conn: psycopg.Connection[Any],
    issue: int,
    conversation_id: uuid.UUID,
    cost_usd: float | None,
    turn: str | None = None,
) -> Moved | None:
    """Sell a turn of this attempt to the account its order names. It is the bee's turn
    unless `turn` names another, such as a review's or a shaping turn's. It runs in the
    transaction of the fact it records. Returns None when the order names no account
    (credits were off) or the attempt is no longer the row's."""
    terms = one_dict(
        conn, "order_credit_terms", {"issue": issue, "conversation_id": conversation_id}
    )
    if terms is None or terms["credit_account"] is None:
        return None
    sale = Sale(
        turn or bee_turn(conversation_id),
        terms["credit_account"],
        issue,
        cost_usd,
        Decimal(terms["credit_markup"]),
        terms["key_index"],
        terms["key_owner"],
    )
    return sell(conn, sale)


def shaping_turn(issue: int) -> str:
    """The ledger's name of one shaping turn of an issue (each its own)."""
    return f"shape:{issue}:{uuid.uuid4()}"


def sell_issue_turn(
    conn: psycopg.Connection[Any], terms: Terms, issue: Issue, turn: str, cost_usd: float | None
) -> Moved:
    """Sell a turn that ran before the issue had an order, such as a shaping turn. It is
    sold to the issue's account under `terms`, in the transaction of the spend it
    records."""
    sale = Sale(
        turn,
        payer(issue.account, terms.default_account),
        issue.number,
        cost_usd,
        terms.markup,
    )
    return sell(conn, sale)


def burn_due(db: Db, accounts: Sequence[str], *, now: datetime | None = None) -> int:
    """Write the burns due now for `accounts` and return the tokens burned. The Queen's
    round calls it."""
    total = 0
    for account in accounts:
        with connection(db) as conn, conn.transaction():
            total += _settle(conn, account, now)[2]
    return total


def sums(db: Db) -> dict[str, int]:
    """The ledger's tokens by kind (grant, sale, burn): the metric's counts."""
    return {r["kind"]: int(r["tokens"]) for r in dicts(db, "credit_sums")}


def accounts_due(db: Db, now: datetime) -> list[str]:
    """The accounts with a lot past its burn time at `now` that is not closed yet."""
    return [r["account"] for r in dicts(db, "credit_accounts_due", {"now": now})]


def accounts(db: Db) -> list[str]:
    """Every account that ever moved a token."""
    return [r["account"] for r in dicts(db, "credit_accounts")]


def history(db: Db, account: str, limit: int = HISTORY_LINES) -> list[dict[str, Any]]:
    """An account's ledger rows, newest first."""
    return dicts(db, "credit_history", {"account": account, "limit": limit})


def sales_of_issue(db: Db, issue: int) -> list[dict[str, Any]]:
    """The sales of an issue's turns, oldest first."""
    return dicts(db, "credit_sales_of_issue", {"issue": issue})
