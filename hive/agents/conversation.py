"""An agent's conversation, carried from one attempt of an issue to the next.

Claude Code and Codex keep a session on the disk of the machine that ran it, and the
next attempt may run on another runner: so the session's file travels with the order,
like the bundle (the ending's own statement stores it, `hive.store.conversations`, and
the next attempt's start hands it to the adapter as `TurnContext.resume`). It is capped
(CONVERSATION_MAX_BYTES: a larger one is not kept, and the next attempt starts fresh,
saying why) and never holds the turn's key.
"""

from __future__ import annotations

from dataclasses import dataclass, field

CONVERSATION_MAX_BYTES = 8 * 1024 * 1024
REDACTED = b"<key>"
REDACT_MIN_CHARS = 8
# the agents whose conversations are carried (HIVE_AGENT's value)
RESUMING_AGENTS = ("claude", "codex")


@dataclass(frozen=True)
class Conversation:
    """`agent` (claude, codex) and its session id; `data`, the session's file. A
    conversation that was not kept has no data and a `note` saying why."""

    agent: str
    session_id: str
    data: bytes = field(repr=False, default=b"")
    note: str = ""


def not_kept(agent: str, session_id: str, note: str) -> Conversation:
    """A conversation the next attempt cannot resume, and why (it starts fresh)."""
    return Conversation(agent, session_id, b"", note)


def restorable(conversation: Conversation) -> bytes:
    """The session file to restore. Raises ValueError (why, in a few words) for a
    conversation that was not kept, or whose file is empty or does not name its session."""
    if conversation.note:
        raise ValueError(conversation.note)
    if not conversation.data.strip():
        raise ValueError("its session file is empty")
    if conversation.session_id.encode() not in conversation.data:
        raise ValueError(f"its file is not the session {conversation.session_id}")
    return conversation.data


def without_key(data: bytes, key: str) -> bytes:
    """`data` with every copy of `key` replaced (a short value is no real key)."""
    if len(key) < REDACT_MIN_CHARS:
        return data
    return data.replace(key.encode(), REDACTED)
