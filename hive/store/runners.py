"""`queen_runner`: who runs bees, with how many slots, and whether it drains."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from hive.store.db import Db, dicts, one, pick


@dataclass(frozen=True)
class Runner:
    name: str
    started_at: datetime
    seen_at: datetime
    slots: int
    running: int
    draining: bool


def register(db: Db, name: str, slots: int) -> Runner:
    return pick(Runner, dicts(db, "register_runner", {"name": name, "slots": slots})[0])


def seen(db: Db, name: str, *, running: int, draining: bool) -> bool:
    """False when the runner is not registered (register it again)."""
    params = {"name": name, "running": running, "draining": draining}
    return one(db, "runner_seen", params) is not None


def listing(db: Db) -> list[Runner]:
    return [pick(Runner, r) for r in dicts(db, "list_runners")]


def forget(db: Db, name: str) -> bool:
    return one(db, "forget_runner", {"name": name}) is not None
