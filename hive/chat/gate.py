"""Whether a bee's bot may run its turn for an issue now (hive.rules.chat_turn decides):
the day's spend against HIVE_SPEND_CAP_USD, and, with credits on, what the issue's
paying account holds. Read from the store when a person asks."""

from __future__ import annotations

from datetime import UTC, datetime

from hive.rules.chat_turn import refusal
from hive.rules.credits import Terms, payer
from hive.rules.spend import day_start
from hive.store import credits, issues, spend
from hive.store.db import Db


def refused(db: Db, issue: int, cap_usd: float, terms: Terms | None) -> str | None:
    """The sentence a bee's bot answers instead of a turn for `issue` (None: it may run)."""
    now = datetime.now(UTC)
    spent = spend.since(db, day_start(now)) if cap_usd > 0 else 0.0
    if terms is None:
        return refusal(issue, spent, cap_usd)
    known = issues.get(db, issue)
    account = payer(None if known is None else known.account, terms.default_account)
    balance = credits.book(db, account, now).balance
    return refusal(issue, spent, cap_usd, account, balance)
