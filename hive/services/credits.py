"""Credits for both faces (`hive credit ...`, `GET /api/credits/<account>`): a grant, an
account's standing, its history. Balances are read from the ledger as it stands now,
lots past their days burned (hive/rules/credits.py)."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from hive.rules.credits import (
    ACCOUNT_ALLOWED,
    BURNING_SOON_DAYS,
    GRANT_MAX_TOKENS,
    Book,
    Kind,
    account_problem,
    burn_after,
)
from hive.rules.text import first_control
from hive.services.errors import BadRequest
from hive.store import credits
from hive.store.db import Db

NOTE_MAX_CHARS = 200


class BadCredit(BadRequest):
    """An account, an amount or a note that cannot be; `str()` names which."""


def account_name(text: str) -> str:
    """`text` as an account, or BadCredit."""
    if account_problem(text) is not None:
        shown = text if len(text) <= 70 else text[:70] + "..."
        raise BadCredit(f"account {shown!r} is not {ACCOUNT_ALLOWED}")
    return text


def token_count(text: str) -> int:
    """A grant's tokens: a whole number from 1 to GRANT_MAX_TOKENS, ASCII digits."""
    if not (text.isascii() and text.isdigit()) or not 1 <= int(text) <= GRANT_MAX_TOKENS:
        raise BadCredit(
            f"tokens {text[:30]!r} is not a whole number from 1 to {GRANT_MAX_TOKENS}"
            " (a token is half a US cent)"
        )
    return int(text)


def grant(
    db: Db, account: str, tokens: int, burn_days: Decimal, note: str | None = None
) -> dict[str, Any]:
    """Land a lot of `tokens` for `account`, burning `burn_days` after; its standing."""
    account_name(account)
    if note is not None and (len(note) > NOTE_MAX_CHARS or first_control(note) is not None):
        raise BadCredit(f"note: one line of at most {NOTE_MAX_CHARS} characters")
    if not 1 <= tokens <= GRANT_MAX_TOKENS:
        raise BadCredit(f"tokens: a whole number from 1 to {GRANT_MAX_TOKENS}")
    credits.grant(db, account, tokens, burn_days, note)
    return standing(db, account)


def standing(db: Db, account: str, now: datetime | None = None) -> dict[str, Any]:
    """An account's standing as JSON: its balance (negative: overdrawn), what it was
    granted, sold and burned, what burns within BURNING_SOON_DAYS, and its unburned lots."""
    account_name(account)
    at = now or datetime.now(UTC)
    return as_json(account, credits.book(db, account, at), at)


def as_json(account: str, book: Book, now: datetime) -> dict[str, Any]:
    soon = now + burn_after(BURNING_SOON_DAYS)
    return {
        "account": account,
        "balance": book.balance,
        "overdrawn": max(0, -book.balance),
        "granted": book.granted,
        "sold": book.sold,
        "burned": book.burned,
        "burning_soon": book.burning_by(soon),
        "burning_soon_days": int(BURNING_SOON_DAYS),
        "lots": [
            {
                "lot": lot.id,
                "landed_at": lot.landed_at.isoformat(),
                "burns_at": lot.burns_at.isoformat(),
                "granted": lot.granted,
                "left": lot.left,
            }
            for lot in book.lots
            if not lot.burned and lot.left > 0
        ],
    }


def every_standing(db: Db, now: datetime | None = None) -> list[dict[str, Any]]:
    """Every account's standing, by name."""
    at = now or datetime.now(UTC)
    books = credits.books(db, credits.accounts(db), at)
    return [as_json(a, b, at) for a, b in sorted(books.items())]


def history(db: Db, account: str, limit: int = credits.HISTORY_LINES) -> list[dict[str, Any]]:
    """An account's movements, newest first, as JSON."""
    account_name(account)
    rows = credits.history(db, account, limit)
    return [{k: _plain(v) for k, v in row.items() if v is not None} for row in rows]


def line(row: dict[str, Any]) -> str:
    """One movement as `hive credit history` prints it."""
    kind, tokens = row["kind"], row["tokens"]
    if kind == Kind.GRANT:
        said = f"grant  +{tokens} (burns {row['burns_at'][:19]}Z)"
        return said + (f" {row['note']}" if row.get("note") else "")
    if kind == Kind.BURN:
        return f"burn   -{tokens} (lot {row['lot']})"
    cost = row.get("cost_micros")
    priced = "unpriced" if cost is None else f"cost ${Decimal(cost) / 1_000_000}"
    said = f"sale   -{tokens} #{row.get('issue')} {row['turn']} ({priced} x{row['markup']})"
    if row.get("overdrawn"):
        said += f", overdrawn by {row['overdrawn']}"
    if row.get("key_owner"):
        said += f", on key {row.get('key_index')} lent by {row['key_owner']} (earns nothing)"
    return said


def _plain(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.astimezone(UTC).isoformat()
    if isinstance(value, Decimal):
        return str(value)
    return value


def of_issue(db: Db, number: int, account: str | None) -> dict[str, Any] | None:
    """What an issue's page shows of credits: the account that paid for its turns (the
    one it names, else the one its last sale went to), that account's standing, and the
    issue's sales; None when the issue names no account and nothing of it was sold."""
    sales = credits.sales_of_issue(db, number)
    payer = account or (sales[-1]["account"] if sales else None)
    if payer is None:
        return None
    return {
        **standing(db, payer),
        "issue_sold": sum(s["tokens"] for s in sales),
        "issue_sales": len(sales),
        "issue_unpriced": sum(1 for s in sales if s["cost_micros"] is None),
    }
