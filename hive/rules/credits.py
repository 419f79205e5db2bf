"""Credits (seed module 7): who pays for a turn, at what price, and when tokens burn.

A token is half a US cent. A grant lands as a lot and burns `burn_days` after it lands;
a burned lot's remainder is gone. Every turn an issue costs is sold at `markup` times
its counted cost, rounded up to a whole token, and taken from the oldest unburned lot
first; what no lot covers is owed (the account is overdrawn), and the next grant pays
what is owed before anything else. Lending a key earns nothing: a turn is paid by its
issue's account whoever owns the key.

The cost is counted exactly: the agent's figure (a float in US dollars) is read to the
nano-dollar (a float's noise lies below), counted in whole micro-dollars rounded up,
and sold at ceil(markup x micro-dollars / 5000). A turn whose cost is unknown
(unpriced) is sold at UNPRICED_TOKENS, the least a turn with any cost is sold at, and
its sale says so; a price for its model in the price table makes the next one exact.

The ledger is a list of movements (grant, sale, burn) in the order they were written.
`replay` reads it into the account's lots and balance; no balance is stored anywhere.
Pure: the clock comes in as an argument.
"""

from __future__ import annotations

import enum
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from decimal import Decimal
from fractions import Fraction
from typing import Any

MICROS_PER_USD = 1_000_000
TOKEN_MICROS = 5_000  # a token is half a US cent
UNPRICED_TOKENS = 1
MARKUP_DEFAULT = Decimal(2)
BURN_DAYS_DEFAULT = Decimal(30)
DEFAULT_ACCOUNT = "default"
BURNING_SOON_DAYS = Decimal(7)  # the board's "burning soon": lots that burn within this
ACCOUNT_MAX_CHARS = 64
GRANT_MAX_TOKENS = 10**12  # a trillion tokens: five billion US dollars
_NANO = Decimal("1e-9")
_ACCOUNT_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._\[\]-]*")
_SECONDS_PER_DAY = 86400


class Kind(enum.StrEnum):
    """A ledger row's movement (the ledger's `kind`, the metric's label)."""

    GRANT = "grant"
    SALE = "sale"
    BURN = "burn"


# --- names and prices --------------------------------------------------------------------


ACCOUNT_ALLOWED = (
    f"an account name: 1 to {ACCOUNT_MAX_CHARS} letters, digits, '.', '_', '-' or brackets,"
    " a letter or digit first"
)


def account_problem(name: str) -> str | None:
    """Why `name` cannot be an account (None: it can): ACCOUNT_ALLOWED says what can (a
    GitHub login, a bot's `name[bot]`)."""
    if len(name) > ACCOUNT_MAX_CHARS or not _ACCOUNT_RE.fullmatch(name):
        return ACCOUNT_ALLOWED
    return None


def payer(account: str | None, default: str = DEFAULT_ACCOUNT) -> str:
    """Who pays for an issue's turns: its own account, else the default one."""
    return account or default


def micros_of(usd: float | Decimal) -> int:
    """A cost in whole micro-dollars, rounded up after reading it to the nano-dollar."""
    exact = Decimal(repr(usd)) if isinstance(usd, float) else usd
    return max(0, math.ceil(exact.quantize(_NANO) * MICROS_PER_USD))


def tokens_for(cost_micros: int | None, markup: Decimal = MARKUP_DEFAULT) -> int:
    """What a turn that cost `cost_micros` is sold at, in whole tokens (rounded up);
    an unpriced turn (None) at UNPRICED_TOKENS."""
    if cost_micros is None:
        return UNPRICED_TOKENS
    return math.ceil(Fraction(markup) * cost_micros / TOKEN_MICROS)


def burn_after(burn_days: Decimal) -> timedelta:
    """How long a lot lives: `burn_days` days, to the microsecond."""
    return timedelta(microseconds=int(burn_days * _SECONDS_PER_DAY * 1_000_000))


def owner_of(owners: Sequence[str], key_index: int | None) -> str | None:
    """Who lent key `key_index` (HIVE_WORKER_KEY_OWNERS, by key index); None: nobody."""
    if key_index is None or not 0 <= key_index < len(owners):
        return None
    return owners[key_index] or None


# --- the ledger --------------------------------------------------------------------------


@dataclass(frozen=True)
class Movement:
    """One ledger row as the replay reads it: a grant (its `burns_at`), a sale, or a
    burn (the `lot` it burns, the id of that lot's grant)."""

    id: int
    kind: Kind
    tokens: int
    at: datetime
    burns_at: datetime | None = None
    lot: int | None = None


@dataclass(frozen=True)
class Lot:
    """A grant as it stands: what it granted, what is left, and whether it burned."""

    id: int
    landed_at: datetime
    burns_at: datetime
    granted: int
    left: int
    burned: bool = False


@dataclass(frozen=True)
class Book:
    """An account's lots (oldest first), what it owes, and the sums of its movements."""

    lots: tuple[Lot, ...] = ()
    owed: int = 0
    granted: int = 0
    sold: int = 0
    burned: int = 0

    @property
    def balance(self) -> int:
        """Tokens left: the unburned lots' remainders less what is owed (negative:
        overdrawn). Always granted - sold - burned."""
        return sum(lot.left for lot in self.lots if not lot.burned) - self.owed

    def burning_by(self, when: datetime) -> int:
        """Tokens of unburned lots that burn at or before `when` (the board's "burning
        soon")."""
        return sum(lot.left for lot in self.lots if not lot.burned and lot.burns_at <= when)


@dataclass(frozen=True)
class Taken:
    """What a sale took: from each lot (lot id, tokens), and what no lot covered."""

    parts: tuple[tuple[int, int], ...]
    overdrawn: int


class LedgerError(ValueError):
    """A ledger row the replay cannot read: a bad kind, a negative amount, a burn of no
    lot or of a lot burned already."""


def take(lots: Sequence[Lot], tokens: int) -> tuple[tuple[Lot, ...], Taken]:
    """Take `tokens` from the oldest unburned lots first: the lots after, and what was
    taken from each (what none covered is `overdrawn`)."""
    need = tokens
    after: list[Lot] = []
    parts: list[tuple[int, int]] = []
    for lot in lots:
        if need and not lot.burned and lot.left:
            got = min(lot.left, need)
            need -= got
            parts.append((lot.id, got))
            lot = replace(lot, left=lot.left - got)
        after.append(lot)
    return tuple(after), Taken(tuple(parts), need)


def apply(book: Book, move: Movement) -> Book:
    """`book` after one movement. A grant pays what is owed first; a sale takes from
    the oldest unburned lots (`take`) and owes the rest; a burn ends its lot's remainder
    (and must name exactly that remainder)."""
    if move.tokens < 0:
        raise LedgerError(f"ledger row {move.id}: {move.tokens} tokens")
    if move.kind is Kind.GRANT:
        if move.burns_at is None:
            raise LedgerError(f"ledger row {move.id}: a grant without its burn time")
        paid = min(book.owed, move.tokens)
        lot = Lot(move.id, move.at, move.burns_at, move.tokens, move.tokens - paid)
        return replace(
            book, lots=(*book.lots, lot), owed=book.owed - paid, granted=book.granted + move.tokens
        )
    if move.kind is Kind.SALE:
        lots, taken = take(book.lots, move.tokens)
        owed = book.owed + taken.overdrawn
        return replace(book, lots=lots, owed=owed, sold=book.sold + move.tokens)
    if move.kind is Kind.BURN:
        burnt = list(book.lots)
        at = next((i for i, lot in enumerate(burnt) if lot.id == move.lot), None)
        if at is None or burnt[at].burned or burnt[at].left != move.tokens:
            raise LedgerError(f"ledger row {move.id}: not the remainder of lot {move.lot}")
        burnt[at] = replace(burnt[at], left=0, burned=True)
        return replace(book, lots=tuple(burnt), burned=book.burned + move.tokens)
    raise LedgerError(f"ledger row {move.id}: kind {move.kind!r}")


def replay(moves: Iterable[Movement]) -> Book:
    """The account's book from its ledger rows, in the order they were written: `apply`
    over each, in one pass whose cost grows with the rows, not rows x lots (a lot once
    empty or burned is never taken from again, so the oldest open lot only moves on)."""
    lots: list[list[Any]] = []  # [id, landed_at, burns_at, granted, left, burned]
    at_lot: dict[int, int] = {}
    front = owed = granted = sold = burned = 0
    for move in moves:
        if move.tokens < 0:
            raise LedgerError(f"ledger row {move.id}: {move.tokens} tokens")
        if move.kind is Kind.GRANT:
            if move.burns_at is None:
                raise LedgerError(f"ledger row {move.id}: a grant without its burn time")
            paid = min(owed, move.tokens)
            owed -= paid
            at_lot[move.id] = len(lots)
            lots.append([move.id, move.at, move.burns_at, move.tokens, move.tokens - paid, False])
            granted += move.tokens
        elif move.kind is Kind.SALE:
            need = move.tokens
            while front < len(lots) and (lots[front][5] or not lots[front][4]):
                front += 1
            at = front
            while need and at < len(lots):
                lot = lots[at]
                if not lot[5] and lot[4]:
                    got = min(lot[4], need)
                    lot[4] -= got
                    need -= got
                at += 1
            owed += need
            sold += move.tokens
        elif move.kind is Kind.BURN:
            index = at_lot.get(move.lot) if move.lot is not None else None
            if index is None or lots[index][5] or lots[index][4] != move.tokens:
                raise LedgerError(f"ledger row {move.id}: not the remainder of lot {move.lot}")
            lots[index][4], lots[index][5] = 0, True
            burned += move.tokens
        else:
            raise LedgerError(f"ledger row {move.id}: kind {move.kind!r}")
    return Book(tuple(Lot(*lot) for lot in lots), owed, granted, sold, burned)


def due_burns(book: Book, now: datetime) -> list[tuple[int, int]]:
    """The lots whose time is up at `now`, as (lot id, the remainder to burn), oldest
    first. A lot emptied by sales burns too (0 tokens): its row closes it."""
    return [(lot.id, lot.left) for lot in book.lots if not lot.burned and lot.burns_at <= now]


def as_of(book: Book, now: datetime) -> Book:
    """`book` as it stands at `now`: the lots due to burn burned, whether or not their
    burn rows were written yet (what a reader sees)."""
    for lot_id, tokens in due_burns(book, now):
        book = apply(book, Movement(0, Kind.BURN, tokens, now, lot=lot_id))
    return book


@dataclass(frozen=True)
class Terms:
    """How a hive with credits on sells (the Queen stamps them on each order): the
    markup, a lot's life in days, the account of an issue that names none, and who lent
    each key (by key index)."""

    markup: Decimal = MARKUP_DEFAULT
    burn_days: Decimal = BURN_DAYS_DEFAULT
    default_account: str = DEFAULT_ACCOUNT
    key_owners: tuple[str, ...] = ()


# --- the gate ----------------------------------------------------------------------------


def may_order(balance: int) -> bool:
    """An account gets a new order only while it holds tokens (above zero). A running
    turn still finishes and is sold, so it may overdraw by its own sale."""
    return balance > 0


def no_credit_sentence(account: str, balance: int) -> str:
    """Why an issue gets no new order (the round's report, `hive why`, the board, a
    comment on GitHub)."""
    state = "is at zero" if balance == 0 else f"is overdrawn by {-balance} tokens"
    return (
        f"no new order: its account {account} {state}; running turns finish;"
        f" hive credit grant {account} TOKENS lets it go on"
    )
