"""`queen_transcript`: what a turn said, line by line, each line capped."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime

from hive.store.db import Db, dicts, pick

# a transcript line is a trace, not a payload store
TEXT_MAX_CHARS = 8000


@dataclass(frozen=True)
class Line:
    conversation_id: uuid.UUID
    seq: int
    issue: int
    at: datetime
    kind: str
    text: str


def append(db: Db, conversation_id: uuid.UUID, issue: int, kind: str, text: str) -> Line:
    params = {
        "conversation_id": conversation_id,
        "issue": issue,
        "kind": kind,
        "text": text,
        "max_chars": TEXT_MAX_CHARS,
    }
    return pick(Line, dicts(db, "append_transcript", params)[0])


def read(db: Db, conversation_id: uuid.UUID, *, after: int = 0) -> list[Line]:
    params = {"conversation_id": conversation_id, "after": after}
    return [pick(Line, r) for r in dicts(db, "read_transcript", params)]
