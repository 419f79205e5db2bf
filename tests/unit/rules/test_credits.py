"""Credits (seed module 7) as vectors: the token price, the oldest lot first, burns, the
gate; and, over random grants, sales and clock moves, the ledger's two invariants."""

from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hive.rules.credits import (
    ACCOUNT_ALLOWED,
    DEFAULT_ACCOUNT,
    UNPRICED_TOKENS,
    Book,
    Kind,
    LedgerError,
    Lot,
    Movement,
    account_problem,
    apply,
    as_of,
    burn_after,
    due_burns,
    may_order,
    micros_of,
    no_credit_sentence,
    owner_of,
    payer,
    replay,
    take,
    tokens_for,
)

T0 = datetime(2026, 1, 1, tzinfo=UTC)
DAY = timedelta(days=1)


def grant(id_: int, tokens: int, at: datetime = T0, days: int = 30) -> Movement:
    return Movement(id_, Kind.GRANT, tokens, at, burns_at=at + days * DAY)


def sale(id_: int, tokens: int, at: datetime = T0) -> Movement:
    return Movement(id_, Kind.SALE, tokens, at)


def burn(id_: int, lot: int, tokens: int, at: datetime = T0) -> Movement:
    return Movement(id_, Kind.BURN, tokens, at, lot=lot)


# --- the price ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("usd", "micros"),
    [
        (0.0123, 12_300),
        (0.0, 0),
        (0.1 + 0.2, 300_000),  # a float's noise (0.30000000000000004) is not a micro-dollar
        (0.0000004, 1),  # any cost at all is at least one micro-dollar
        (1.0000011, 1_000_002),
        (Decimal("2.5"), 2_500_000),
        (-0.5, 0),
    ],
)
def test_a_cost_is_counted_in_whole_micro_dollars_rounded_up(usd: float, micros: int) -> None:
    assert micros_of(usd) == micros


@pytest.mark.parametrize(
    ("micros", "markup", "tokens"),
    [
        (12_300, Decimal(2), 5),  # $0.0123 x 2 = 4.92 half-cents: 5 tokens
        (2_500, Decimal(2), 1),  # exactly one token
        (2_501, Decimal(2), 2),  # a micro-dollar past it rounds up
        (0, Decimal(2), 0),  # a turn that cost nothing is sold for nothing
        (1, Decimal(2), 1),
        (5_000, Decimal(1), 1),
        (10_000, Decimal("1.5"), 3),
        (1_000_000, Decimal(2), 400),  # a dollar at twice its cost: four dollars of half-cents
        (None, Decimal(2), UNPRICED_TOKENS),
    ],
)
def test_a_turn_is_sold_at_markup_times_its_cost_in_half_cents_rounded_up(
    micros: int | None, markup: Decimal, tokens: int
) -> None:
    assert tokens_for(micros, markup) == tokens


def test_a_lot_lives_its_days_to_the_microsecond() -> None:
    assert burn_after(Decimal(30)) == timedelta(days=30)
    assert burn_after(Decimal("0.00001")) == timedelta(microseconds=864_000)


@pytest.mark.parametrize("name", ["team-a", "octocat", "dependabot[bot]", "a", "x" * 64, "a.b_c"])
def test_accounts_that_are_names(name: str) -> None:
    assert account_problem(name) is None


@pytest.mark.parametrize("name", ["", "x" * 65, "-lead", "a b", "é", "a/b", "a\n"])
def test_accounts_that_are_not(name: str) -> None:
    assert account_problem(name) == ACCOUNT_ALLOWED


def test_an_issue_without_an_account_is_paid_by_the_default() -> None:
    assert payer(None) == DEFAULT_ACCOUNT
    assert payer("", "ops") == "ops"
    assert payer("team-a", "ops") == "team-a"


def test_key_owners_are_named_by_key_index() -> None:
    owners = ("alice", "", "bob")
    assert [owner_of(owners, i) for i in (0, 1, 2, 3, None, -1)] == [
        "alice",
        None,
        "bob",
        None,
        None,
        None,
    ]


# --- lots ---------------------------------------------------------------------------------


def test_a_sale_takes_from_the_oldest_unburned_lot_first() -> None:
    book = replay([grant(1, 10), grant(2, 10, T0 + DAY), sale(3, 13)])
    assert [(lot.id, lot.left) for lot in book.lots] == [(1, 0), (2, 7)]
    assert book.balance == 7


def test_take_says_what_it_took_from_each_lot_and_what_none_covered() -> None:
    lots = (
        Lot(1, T0, T0 + DAY, 5, 0),
        Lot(2, T0, T0 + DAY, 5, 3, burned=True),
        Lot(3, T0, T0 + DAY, 5, 4),
    )
    after, taken = take(lots, 6)
    assert taken.parts == ((3, 4),)
    assert taken.overdrawn == 2
    assert [lot.left for lot in after] == [0, 3, 0]


def test_a_sale_past_every_lot_owes_the_rest_and_the_next_grant_pays_it() -> None:
    book = replay([grant(1, 4), sale(2, 10)])
    assert book.owed == 6 and book.balance == -6
    book = apply(book, grant(3, 10))
    assert book.owed == 0 and book.balance == 4
    assert [lot.left for lot in book.lots] == [0, 4]


def test_a_burn_takes_the_lots_remainder_and_nothing_else() -> None:
    book = replay([grant(1, 10), grant(2, 5, T0 + DAY), sale(3, 4), burn(4, 1, 6)])
    assert book.balance == 5
    assert (book.granted, book.sold, book.burned) == (15, 4, 6)
    assert [lot.burned for lot in book.lots] == [True, False]


def test_a_burned_lot_is_passed_over_by_a_sale() -> None:
    book = replay([grant(1, 10), grant(2, 5), burn(3, 1, 10), sale(4, 7)])
    assert [lot.left for lot in book.lots] == [0, 0]
    assert book.owed == 2


def test_lots_due_at_a_time_burn_their_remainder_and_an_emptied_lot_burns_zero() -> None:
    book = replay([grant(1, 10, days=1), grant(2, 8, days=1), grant(3, 5, days=2), sale(4, 10)])
    assert due_burns(book, T0 + DAY - timedelta(microseconds=1)) == []
    assert due_burns(book, T0 + DAY) == [(1, 0), (2, 8)]
    seen = as_of(book, T0 + 2 * DAY)
    assert seen.balance == 0 and seen.burned == 13


def test_burning_soon_counts_what_burns_by_then() -> None:
    book = replay([grant(1, 10, days=3), grant(2, 8, days=20)])
    assert book.burning_by(T0 + 7 * DAY) == 10
    assert book.burning_by(T0 + 30 * DAY) == 18


@pytest.mark.parametrize(
    "rows",
    [
        [grant(1, 10), burn(2, 1, 9)],  # not the remainder
        [grant(1, 10), burn(2, 1, 10), burn(3, 1, 0)],  # burned twice
        [burn(1, 7, 0)],  # no such lot
        [sale(1, -1)],
        [Movement(1, Kind.GRANT, 5, T0)],  # a grant without its burn time
        [Movement(1, "refund", 5, T0)],  # type: ignore[arg-type]
    ],
)
def test_a_ledger_the_replay_cannot_read_is_refused(rows: list[Movement]) -> None:
    with pytest.raises(LedgerError):
        replay(rows)
    with pytest.raises(LedgerError):
        book = Book()
        for row in rows:
            book = apply(book, row)


# --- the gate -----------------------------------------------------------------------------


def test_only_an_account_that_holds_tokens_gets_a_new_order() -> None:
    assert may_order(1)
    assert not may_order(0)
    assert not may_order(-3)


def test_the_sentence_names_the_account_and_the_grant_that_lets_it_go_on() -> None:
    assert no_credit_sentence("team-a", 0) == (
        "no new order: its account team-a is at zero; running turns finish;"
        " hive credit grant team-a TOKENS lets it go on"
    )
    assert "is overdrawn by 4 tokens" in no_credit_sentence("team-a", -4)


# --- properties -----------------------------------------------------------------------------

STEP = st.one_of(
    st.tuples(st.just("grant"), st.integers(0, 500), st.integers(0, 40)),
    st.tuples(st.just("sale"), st.integers(0, 300), st.just(0)),
    st.tuples(st.just("clock"), st.integers(0, 20 * 86400), st.just(0)),
)


def run_ledger(steps: list[tuple[str, int, int]]) -> tuple[list[Movement], datetime]:
    """The ledger a writer keeps: each movement first burns what is due (as the store's
    movements do), then writes itself."""
    rows: list[Movement] = []
    now = T0
    book = Book()
    for kind, amount, days in steps:
        if kind == "clock":
            now += timedelta(seconds=amount)
            continue
        for lot, tokens in due_burns(book, now):
            rows.append(burn(len(rows) + 1, lot, tokens, now))
            book = apply(book, rows[-1])
        if kind == "grant":
            rows.append(grant(len(rows) + 1, amount, now, days))
        else:
            rows.append(sale(len(rows) + 1, amount, now))
        book = apply(book, rows[-1])
    return rows, now


@settings(max_examples=300, deadline=None)
@given(st.lists(STEP, max_size=40))
def test_the_balance_is_grants_less_sales_less_burns_and_no_lot_goes_negative(
    steps: list[tuple[str, int, int]],
) -> None:
    rows, now = run_ledger(steps)
    for upto in range(len(rows) + 1):
        book = replay(rows[:upto])
        assert book.balance == book.granted - book.sold - book.burned
        assert all(0 <= lot.left <= lot.granted for lot in book.lots)
        assert book.owed >= 0
    seen = as_of(replay(rows), now)
    assert seen.balance == seen.granted - seen.sold - seen.burned
    assert all(lot.burned or lot.left == 0 or lot.burns_at > now for lot in seen.lots)
    by_kind = {k: sum(r.tokens for r in rows if r.kind is k) for k in Kind}
    book = replay(rows)
    assert (book.granted, book.sold, book.burned) == (
        by_kind[Kind.GRANT],
        by_kind[Kind.SALE],
        by_kind[Kind.BURN],
    )


@settings(max_examples=200, deadline=None)
@given(st.lists(STEP, max_size=40))
def test_no_sale_takes_from_a_lot_past_its_burn_time(steps: list[tuple[str, int, int]]) -> None:
    rows, _ = run_ledger(steps)
    book = Book()
    for row in rows:
        if row.kind is Kind.SALE:
            _, taken = take(book.lots, row.tokens)
            lots = {lot.id: lot for lot in book.lots}
            assert all(lots[lot].burns_at > row.at for lot, _ in taken.parts)
        book = apply(book, row)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 10**9), st.sampled_from([Decimal(1), Decimal(2), Decimal("2.5")]))
def test_a_sale_never_undercharges_and_overcharges_by_less_than_a_token(
    micros: int, markup: Decimal
) -> None:
    tokens = tokens_for(micros, markup)
    assert tokens * 5000 >= markup * micros > (tokens - 1) * 5000


# --- the round's gate -------------------------------------------------------------------------


def test_a_round_gives_no_order_to_an_issue_whose_account_holds_nothing() -> None:
    from hive.rules.priority import Candidate
    from hive.rules.round import Limits, NoCredit, Planned, RoundFacts, plan_round, render

    facts = RoundFacts(
        Limits(max_workers=4, lanes_per_key=4, elsewhere=True),
        candidates=tuple(Candidate(n, boundary=(f"src/{n}.py",)) for n in (1, 2, 3, 4)),
        keys=(0,),
        payers={1: "team", 2: "rich", 3: "owing"},  # 4: credits off for it (no payer)
        balances={"team": 0, "rich": 1, "owing": -7},
    )
    plan = plan_round(facts)
    assert plan.orders == (Planned(2, 0), Planned(4, 0))
    assert plan.skipped == (NoCredit(1, "team", 0), NoCredit(3, "owing", -7))
    assert render(plan.skipped[0]) == no_credit_sentence("team", 0)
    assert plan.needs_you
    assert not plan_round(
        RoundFacts(facts.limits, candidates=facts.candidates, keys=(0,))
    ).needs_you


def test_the_readmes_worked_example() -> None:
    """README, "Credits": the table's every line."""
    costs = [(1, 0.0123, 5), (2, None, 1), (5, 2.10, 840), (31, 1.60, 640)]
    prices = {day: tokens_for(None if usd is None else micros_of(usd)) for day, usd, _ in costs}
    assert prices == {day: tokens for day, _, tokens in costs}
    at = [T0 + d * DAY for d in range(33)]
    book = replay([grant(1, 1000, at[0])])
    balances = []
    for move in [sale(2, 5, at[1]), sale(3, 1, at[2]), sale(4, 840, at[5]), grant(5, 600, at[20])]:
        book = apply(book, move)
        balances.append(book.balance)
    assert balances == [995, 994, 154, 754]
    assert due_burns(book, at[30]) == [(1, 154)]
    book = apply(book, burn(6, 1, 154, at[30]))
    assert book.balance == 600
    book = apply(book, sale(7, 640, at[31]))
    assert (book.balance, book.owed) == (-40, 40) and not may_order(book.balance)
    book = apply(book, grant(8, 500, at[32]))
    assert book.balance == 460 and may_order(book.balance)


def stepwise(rows: list[Movement]) -> Book:
    book = Book()
    for row in rows:
        book = apply(book, row)
    return book


@settings(max_examples=300, deadline=None)
@given(st.lists(STEP, max_size=60))
def test_the_one_pass_replay_is_apply_over_each_row(steps: list[tuple[str, int, int]]) -> None:
    rows, _ = run_ledger(steps)
    for upto in range(len(rows) + 1):
        assert replay(rows[:upto]) == stepwise(rows[:upto])


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["grant", "sale", "burn"]), st.integers(-1, 50), st.integers(1, 9)
        ),
        max_size=30,
    )
)
def test_the_one_pass_replay_refuses_what_apply_refuses(rows: list[tuple[str, int, int]]) -> None:
    """Arbitrary rows (a burn of any lot, of any amount): both read them alike, or both
    refuse them."""
    moves = []
    for i, (kind, tokens, lot) in enumerate(rows, 1):
        if kind == "grant":
            moves.append(grant(i, tokens, T0 + lot * DAY))
        elif kind == "sale":
            moves.append(sale(i, tokens))
        else:
            moves.append(burn(i, lot, tokens))
    try:
        expected: Book | None = stepwise(moves)
    except LedgerError:
        expected = None
    if expected is None:
        with pytest.raises(LedgerError):
            replay(moves)
    else:
        assert replay(moves) == expected


def summed_runs(rows: list[Movement]) -> list[Movement]:
    """Each run of sales as one sale of their sum (what the store's query reads)."""
    out: list[Movement] = []
    for row in rows:
        if row.kind is Kind.SALE and out and out[-1].kind is Kind.SALE:
            out[-1] = sale(out[-1].id, out[-1].tokens + row.tokens, out[-1].at)
        else:
            out.append(row)
    return out


@settings(max_examples=300, deadline=None)
@given(st.lists(STEP, max_size=60))
def test_a_run_of_sales_replays_as_one_sale_of_their_sum(steps: list[tuple[str, int, int]]) -> None:
    rows, now = run_ledger(steps)
    assert replay(summed_runs(rows)) == replay(rows)
    assert as_of(replay(summed_runs(rows)), now) == as_of(replay(rows), now)
