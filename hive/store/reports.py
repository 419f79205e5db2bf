"""`queen_report`: a Queen round's report (one per round, but for repeats: hive.rules.report)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from hive.store.db import Db, dicts, pick


@dataclass(frozen=True)
class Report:
    id: int
    at: datetime
    headline: str
    body: str
    needs_you: bool


def add(db: Db, headline: str, body: str = "", *, needs_you: bool = False) -> Report:
    params = {"headline": headline, "body": body, "needs_you": needs_you}
    return pick(Report, dicts(db, "insert_report", params)[0])


def latest(db: Db, limit: int = 20) -> list[Report]:
    return [pick(Report, r) for r in dicts(db, "latest_reports", {"limit": limit})]
