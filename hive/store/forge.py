"""The GitHub forge's rows: its notes (comments and issues it keeps on GitHub)."""

from __future__ import annotations

from dataclasses import dataclass

from hive.store.db import Db, dicts


@dataclass(frozen=True)
class NoteRow:
    remote_id: int
    body: str


@dataclass(frozen=True)
class WatchFact:
    issue: int
    attempt: int | None
    order_state: int | None
    review_note: str | None


def note(db: Db, subject: str, kind: str) -> NoteRow | None:
    rows = dicts(db, "forge_note", {"subject": subject, "kind": kind})
    return NoteRow(int(rows[0]["remote_id"]), str(rows[0]["body"])) if rows else None


def put_note(db: Db, subject: str, kind: str, remote_id: int, body: str) -> None:
    params = {"subject": subject, "kind": kind, "remote_id": remote_id, "body": body}
    dicts(db, "put_forge_note", params)


def drop_note(db: Db, subject: str, kind: str) -> bool:
    return bool(dicts(db, "drop_forge_note", {"subject": subject, "kind": kind}))


def watch_facts(db: Db) -> list[WatchFact]:
    return [
        WatchFact(r["issue"], r["attempt"], r["order_state"], r["review_note"])
        for r in dicts(db, "forge_watch_facts", {})
    ]
