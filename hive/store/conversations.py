"""`queen_conversation`: the conversation an attempt's agent left (hive/agents/
conversation.py), one per issue. The ending stores it in its own statement (`endings.end`,
`OrderEnding.keeps_conversation`), so a next attempt, which may start on another runner
as soon as the ending lands, finds it; that attempt's start reads it with the bundle
(`earlier`)."""

from __future__ import annotations

from dataclasses import dataclass

from hive.agents.conversation import Conversation
from hive.store.db import Db, one_dict


@dataclass(frozen=True)
class Earlier:
    """What the issue's last attempt left for the next one's start: its bundle's bytes
    and its conversation (None: none, or not asked for)."""

    bundle: bytes | None = None
    conversation: Conversation | None = None


def earlier(db: Db, issue: int, *, bundle: bool, conversation: bool) -> Earlier:
    """The bundle (when `bundle`) and the conversation (when `conversation`) the issue's
    last attempt left, in one read."""
    params = {"issue": issue, "bundle": bundle, "conversation": conversation}
    row = one_dict(db, "get_earlier", params)
    if row is None:  # the statement always answers one row
        return Earlier()
    kept = None
    if row["agent"] is not None:
        kept = Conversation(row["agent"], row["session_id"], bytes(row["data"]), row["note"])
    return Earlier(None if row["bundle"] is None else bytes(row["bundle"]), kept)


def get(db: Db, issue: int) -> Conversation | None:
    """The conversation the issue's latest attempt left, or None."""
    return earlier(db, issue, bundle=False, conversation=True).conversation
