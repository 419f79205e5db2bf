"""`queen_bundle`: the git bundle of base..queen-<issue> a turn left. It is written only
by `endings.end` (one statement with the ending), and read here."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from hive.store.db import Db, dicts, pick


@dataclass(frozen=True)
class NewBundle:
    """What an ending stores: the bundle bytes and the refs they cover."""

    branch: str
    base: str
    base_sha: str | None
    head_sha: str
    data: bytes


@dataclass(frozen=True)
class BundleInfo:
    issue: int
    branch: str
    base: str
    base_sha: str | None
    head_sha: str
    runner: str | None
    size: int
    created_at: datetime


@dataclass(frozen=True)
class Bundle(BundleInfo):
    data: bytes


def get(db: Db, issue: int) -> Bundle | None:
    rows = dicts(db, "get_bundle", {"issue": issue})
    return pick(Bundle, rows[0]) if rows else None


def listing(db: Db) -> list[BundleInfo]:
    """Every stored bundle, without the bytes."""
    return [pick(BundleInfo, r) for r in dicts(db, "list_bundles")]
