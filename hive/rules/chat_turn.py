"""Whether a bee's bot may run its short turn for a person's question in the room
(issue 32), and what it answers: the turn is refused, with a sentence, when the day's
spend reached HIVE_SPEND_CAP_USD or when the issue's account holds no token
(HIVE_CREDITS=on); otherwise the answer is the turn's reply text, cut to a message's
bound."""

from __future__ import annotations

from hive.rules.chat import one_line
from hive.rules.credits import may_order
from hive.rules.spend import spend_stops

NO_ISSUE = "Name the issue (#12) whose conversation I resume, and I answer."
SAID_NOTHING = "My turn ended and said nothing."


def refusal(
    issue: int,
    spent_today_usd: float,
    cap_usd: float,
    account: str | None = None,
    balance: int = 0,
) -> str | None:
    """Why a bee's bot runs no turn for `issue` (None: it may). `account` is the issue's
    paying account when credits are on (None: off), `balance` what it holds."""
    if spend_stops(spent_today_usd, cap_usd):
        return (
            f"I run no turn for #{issue}: today's spend ${spent_today_usd:.2f} reached"
            f" HIVE_SPEND_CAP_USD=${cap_usd:.2f}; ask again after 00:00 UTC."
        )
    if account is not None and not may_order(balance):
        state = "is at zero" if balance == 0 else f"is overdrawn by {-balance} tokens"
        return (
            f"I run no turn for #{issue}: its account {account} {state};"
            f" hive credit grant {account} TOKENS lets me answer."
        )
    return None


def reply(text: str | None) -> str:
    """The bot's answer from its turn's reply text, within a message's bound."""
    said = (text or "").strip()
    return one_line(said) if said else SAID_NOTHING
