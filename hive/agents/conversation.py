"""An agent's conversation, carried from one attempt of an issue to the next.

Claude Code keeps a session on the disk of the machine that ran it, keyed by the working
directory, and the next attempt may run on another runner: so the session's file
travels with the order, like the bundle. It is capped (CONVERSATION_MAX_BYTES: a larger
one is not kept, and the next attempt starts fresh) and never holds the turn's key.
"""

from __future__ import annotations

from dataclasses import dataclass, field

CONVERSATION_MAX_BYTES = 8 * 1024 * 1024
REDACTED = b"<key>"
REDACT_MIN_CHARS = 8


@dataclass(frozen=True)
class Conversation:
    """`agent` (claude, codex) and its session id; `data`, the session's file."""

    agent: str
    session_id: str
    data: bytes = field(repr=False, default=b"")


def without_key(data: bytes, key: str) -> bytes:
    """`data` with every copy of `key` replaced (a short value is no real key)."""
    if len(key) < REDACT_MIN_CHARS:
        return data
    return data.replace(key.encode(), REDACTED)
