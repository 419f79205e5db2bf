"""`queen_conversation`: the conversation an attempt's agent left (hive/agents/
conversation.py), one per issue. The bee writes it before its ending (`keep`), fenced
like the ending, so a next attempt, which may start on another runner as soon as the
ending lands, finds it; that attempt's start reads it (`get`)."""

from __future__ import annotations

from hive.agents.conversation import Conversation
from hive.store.db import Db, one, one_dict
from hive.store.orders import Fence


def keep(db: Db, fence: Fence, conversation: Conversation | None) -> bool:
    """Store `conversation` as the issue's (None: drop the one an earlier attempt left).
    False when the attempt is no longer its row's or has ended: nothing was written."""
    params = {
        "issue": fence.issue,
        "conversation_id": fence.conversation_id,
        "runner": fence.runner,
        "agent": conversation.agent if conversation else None,
        "session_id": conversation.session_id if conversation else None,
        "bytes": conversation.data if conversation else None,
        "note": conversation.note if conversation else None,
    }
    return one(db, "keep_conversation", params) is not None


def get(db: Db, issue: int) -> Conversation | None:
    """The conversation the issue's latest attempt left, or None."""
    row = one_dict(db, "get_conversation", {"issue": issue})
    if row is None:
        return None
    return Conversation(row["agent"], row["session_id"], bytes(row["data"]), row["note"])
