"""What a Queen round reads of credits (HIVE_CREDITS=on, hive/rules/credits.py): who
pays for each open issue and what each of those accounts holds now. Before it reads, it
writes the burns that are due, so a lot past its time is gone from the ledger and not
only from the sum."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from hive.rules.credits import Terms, payer
from hive.store import credits
from hive.store.db import Db
from hive.store.issues import Issue

log = logging.getLogger("hive.queen")


@dataclass(frozen=True)
class CreditFacts:
    """Each open issue's paying account, and each such account's balance."""

    payers: dict[int, str] = field(default_factory=dict)
    balances: dict[str, int] = field(default_factory=dict)


def credit_facts(
    db: Db, terms: Terms | None, open_issues: Iterable[Issue], now: datetime
) -> CreditFacts:
    """The round's credit facts (empty when credits are off), after burning what is due."""
    if terms is None:
        return CreditFacts()
    payers = {i.number: payer(i.account, terms.default_account) for i in open_issues}
    burned = credits.burn_due(db, credits.accounts_due(db, now))
    if burned:
        log.info("burned %d tokens of lots past their days", burned)
    books = credits.books(db, set(payers.values()), now)
    return CreditFacts(payers, {a: b.balance for a, b in books.items()})
