"""Credits on the board (HIVE_CREDITS): each account's balance and what burns soon in
the board's header, and the paying account on an issue's page."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from hive.board.escape import text


def _standing(one: Mapping[str, Any]) -> str:
    said = f"{one['balance']} tokens"
    if one["overdrawn"]:
        said += " (overdrawn)"
    if one["burning_soon"]:
        said += f", {one['burning_soon']} burning within {one['burning_soon_days']} days"
    return said


def header(standings: Sequence[Mapping[str, Any]]) -> str:
    """The header's line: every account's balance (nothing when there is none)."""
    if not standings:
        return ""
    accounts = " · ".join(f"{text(s['account'])} {text(_standing(s))}" for s in standings)
    return f'<p class="credit">credit: {accounts}</p>'


def issue_section(credit: Mapping[str, Any] | None) -> str:
    """An issue's page: who pays, what that account holds, what this issue was sold."""
    if credit is None:
        return ""
    sold = f"{credit['issue_sold']} tokens over {credit['issue_sales']} turns"
    if credit["issue_unpriced"]:
        sold += f" ({credit['issue_unpriced']} unpriced)"
    return (
        f"<h2>Credit</h2><p>paid by {text(credit['account'])}: "
        f"{text(_standing(credit))}; this issue bought {text(sold)}</p>"
    )
