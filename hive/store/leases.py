"""`queen_lease` (RULES 3): named leases with a fence that never goes back. The Queen
lease is one of them. Every write made under a lease carries its fence."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from hive.store.db import Db, dicts, one, pick

QUEEN_LEASE = "queen"


@dataclass(frozen=True)
class Lease:
    name: str
    holder: str
    fence: int
    expires_at: datetime


def claim(db: Db, name: str, holder: str, ttl_seconds: float) -> Lease | None:
    """Take the lease if free, expired or ours (the fence goes up by one); None if held."""
    params = {"name": name, "holder": holder, "ttl_seconds": ttl_seconds}
    rows = dicts(db, "claim_lease", params)
    return pick(Lease, rows[0]) if rows else None


def renew(db: Db, lease: Lease, ttl_seconds: float) -> Lease | None:
    """Extend a lease we hold at its fence; None means it was lost."""
    rows = dicts(db, "renew_lease", {**_fenced(lease), "ttl_seconds": ttl_seconds})
    return pick(Lease, rows[0]) if rows else None


def release(db: Db, lease: Lease) -> bool:
    """Expire the lease now if we still hold it at its fence."""
    return one(db, "release_lease", _fenced(lease)) is not None


def held(db: Db, lease: Lease) -> bool:
    """Whether `lease` is still held by its holder at its fence and not expired. Held now
    means held since its claim (the fence never goes back; an expired lease is never
    renewed), so a write under it that wrote nothing was not fenced out."""
    return one(db, "lease_held", _fenced(lease)) is not None


def get(db: Db, name: str) -> Lease | None:
    rows = dicts(db, "get_lease", {"name": name})
    return pick(Lease, rows[0]) if rows else None


def _fenced(lease: Lease) -> dict[str, Any]:
    """The lease as the fenced statements name it: which, whose, at which fence."""
    return {"name": lease.name, "holder": lease.holder, "fence": lease.fence}
