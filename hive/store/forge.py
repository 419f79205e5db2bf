"""The GitHub forge's rows: its notes (comments and issues it keeps on GitHub), and the
facts the night watch reads."""

from __future__ import annotations

from dataclasses import dataclass

from hive.rules.states import State
from hive.store.db import Db, as_members, dicts


@dataclass(frozen=True)
class NoteRow:
    remote_id: int
    body: str


@dataclass(frozen=True)
class Merge:
    """An issue's work merged as `sha`."""

    issue: int
    sha: str


@dataclass(frozen=True)
class WatchFact:
    issue: int
    attempt: int | None
    order_state: State | None
    review_note: str | None

    def __post_init__(self) -> None:
        as_members(self, order_state=State)


def note(db: Db, subject: str, kind: str) -> NoteRow | None:
    rows = dicts(db, "forge_note", {"subject": subject, "kind": kind})
    return NoteRow(int(rows[0]["remote_id"]), str(rows[0]["body"])) if rows else None


def put_note(db: Db, subject: str, kind: str, remote_id: int, body: str) -> None:
    params = {"subject": subject, "kind": kind, "remote_id": remote_id, "body": body}
    dicts(db, "put_forge_note", params)


def notes_of_kind(db: Db, kind: str) -> dict[str, NoteRow]:
    """Every note of `kind`, by its subject."""
    rows = dicts(db, "forge_notes_of_kind", {"kind": kind})
    return {str(r["subject"]): NoteRow(int(r["remote_id"]), str(r["body"])) for r in rows}


def drop_note(db: Db, subject: str, kind: str) -> bool:
    return bool(dicts(db, "drop_forge_note", {"subject": subject, "kind": kind}))


def watch_facts(db: Db) -> list[WatchFact]:
    return [
        WatchFact(r["issue"], r["attempt"], r["order_state"], r["review_note"])
        for r in dicts(db, "forge_watch_facts", {})
    ]


def merged_unclosed(db: Db, label: str, closed_kind: str, limit: int) -> list[Merge]:
    """Up to `limit` issues carrying `label` whose merge has no note of `closed_kind`
    naming its sha, newest merge first (a fresh merge does not wait behind a backlog)."""
    params = {"labels": [label], "kind": closed_kind, "limit": limit}
    return [Merge(r["issue"], r["merged_sha"]) for r in dicts(db, "forge_merged_unclosed", params)]


def delivery_seen(db: Db, delivery_id: str) -> bool:
    """Whether the webhook delivery `delivery_id` was handled already."""
    return bool(dicts(db, "forge_delivery_seen", {"delivery_id": delivery_id}))


def record_delivery(db: Db, delivery_id: str, keep_days: int) -> None:
    """Record a handled delivery; those older than `keep_days` go."""
    dicts(db, "record_forge_delivery", {"delivery_id": delivery_id, "keep_days": keep_days})
