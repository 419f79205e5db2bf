"""Durable waits, in `queen_wait` (RULES 9). A wait wakes its owner at a time or on an
event.

Only a waiting row moves, and the first resolution wins. The functions that move rows
return the rows this call moved, and only those wake their owner (`wakes`). The
statement that resolves or expires a wait also makes ready the job parked on it. A
NOTIFY on `hive_waits`, and on `hive_jobs` for a woken job, tells the listeners. A
NOTIFY is only a hint; the rows are the truth.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from psycopg.types.json import Jsonb

from hive.rules.waits import (
    CLAIM_BATCH,
    CLAIM_TTL_SECONDS,
    WaitState,
    wait_problem,
    wakes_owner,
)
from hive.store.db import Db, as_members, dicts, pick

WAITS_CHANNEL = "hive_waits"
JOBS_CHANNEL = "hive_jobs"


@dataclass(frozen=True)
class Wait:
    id: int
    owner: str  # who is woken: `job:<id>` for a parked job
    key: str | None  # the event that resolves it
    wake_at: datetime | None  # when it expires
    state: WaitState
    epoch: int  # the fence of a scheduler's claim
    claimed_by: str | None
    claim_due_at: datetime | None
    payload: Any
    created_at: datetime
    resolved_at: datetime | None

    def __post_init__(self) -> None:
        as_members(self, state=WaitState)


@dataclass(frozen=True)
class Moved:
    """A wait this call moved (resolved or expired), and the job that woke with it."""

    wait: Wait
    woke_job: int | None

    @property
    def wakes(self) -> bool:
        """Whether this write wakes the owner. It does when it moved the row to RESOLVED or
        EXPIRED."""
        return wakes_owner(True, self.wait.state)


def _wait(row: Mapping[str, Any]) -> Wait:
    return pick(Wait, row)


def _moved(rows: list[dict[str, Any]]) -> list[Moved]:
    return [Moved(_wait(row), row["woke_job"]) for row in rows]


def add(
    db: Db,
    owner: str,
    *,
    key: str | None = None,
    wake_in_seconds: int | None = None,
    payload: Mapping[str, Any] | None = None,
) -> Wait:
    """A new waiting row for `owner`, resolved by `key`, expiring `wake_in_seconds` from
    now, or both. ValueError (the rule's sentence) for a malformed wait."""
    problem = wait_problem(key, wake_in_seconds)
    if problem is not None:
        raise ValueError(problem)
    params = {
        "owner": owner,
        "wait_key": key,
        "wake_in_seconds": wake_in_seconds,
        "payload": Jsonb(dict(payload)) if payload is not None else None,
    }
    return _wait(dicts(db, "add_wait", params)[0])


def resolve(db: Db, key: str) -> list[Moved]:
    """Resolve every waiting row with `key`. Only the rows this call moved come back. A
    second resolution of the same key, even at the same moment, gets an empty list and
    must not wake anyone."""
    return _moved(dicts(db, "resolve_waits", {"wait_key": key}))


def expire_due(db: Db, *, batch: int = CLAIM_BATCH) -> list[Moved]:
    """Expire up to `batch` waiting rows whose wake time came, and return the rows this
    call moved. A row claimed by a scheduler is left to it until its claim runs out."""
    return _moved(dicts(db, "expire_due_waits", {"batch": batch}))


def claim_due(
    db: Db, holder: str, *, batch: int = CLAIM_BATCH, ttl_seconds: float = CLAIM_TTL_SECONDS
) -> list[Wait]:
    """Claim up to `batch` waiting rows whose wake time came. It is for a scheduler that
    acts before it moves them. Each row comes at its new epoch, which `expire_claimed`
    names."""
    params = {"holder": holder, "batch": batch, "ttl_seconds": ttl_seconds}
    return [_wait(row) for row in dicts(db, "claim_due_waits", params)]


def expire_claimed(db: Db, wait: Wait) -> Moved | None:
    """Expire a wait claimed by `claim_due`, at its claimed epoch. None: it did not land.
    Either a resolution came first, or its claim ran out and another took it."""
    rows = dicts(db, "expire_claimed_wait", {"wait_id": wait.id, "epoch": wait.epoch})
    moved = _moved(rows)
    return moved[0] if moved else None


def cancel(db: Db, wait_id: int) -> Wait | None:
    """Cancel a waiting row. Nobody is woken. None: it had already moved."""
    rows = dicts(db, "cancel_wait", {"wait_id": wait_id})
    return _wait(rows[0]) if rows else None


def get(db: Db, wait_id: int) -> Wait | None:
    rows = dicts(db, "get_wait", {"wait_id": wait_id})
    return _wait(rows[0]) if rows else None


def due_in_seconds(db: Db) -> float | None:
    """Seconds until the nearest waiting row's wake time, for
    `hive.rules.waits.poll_delay_seconds`. Zero or less means now; None means no row."""
    rows = dicts(db, "wait_due_in_seconds")
    value = rows[0]["due_in_seconds"] if rows else None
    return None if value is None else float(value)
