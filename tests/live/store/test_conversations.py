"""`queen_conversation`: the conversation an attempt leaves is stored by its ending (the
fenced cases are in test_ending_round_trips.py); a turn that left none drops the issue's
earlier one; the store refuses a size that is not the bytes' or past the cap."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest

from hive.agents.conversation import Conversation, not_kept
from hive.rules.states import Outcome
from hive.store import conversations, endings, orders
from hive.store.endings import OrderEnding

from .conftest import queue

SESSION = Conversation("claude", "s-1", b'{"sessionId":"s-1"}\n')


def test_an_ending_keeps_its_conversation_and_the_next_one_reads_it(conn: Any) -> None:
    def ended(issue: int, conversation: Conversation | None) -> None:
        fence = orders.claim(conn, "runner-a")
        assert fence is not None and fence.issue == issue
        ending = OrderEnding(
            fence.fence, Outcome.ENDED_BADLY, keeps_conversation=True, conversation=conversation
        )
        assert endings.end(conn, ending).landed

    queue(conn, 1)
    ended(1, SESSION)
    assert conversations.get(conn, 1) == SESSION
    queue(conn, 1)
    ended(1, not_kept("claude", "s-1", "too large"))
    assert conversations.get(conn, 1) == Conversation("claude", "s-1", b"", "too large")
    queue(conn, 1)
    ended(1, None)  # the turn left none: the earlier goes
    assert conversations.get(conn, 1) is None


def test_the_store_refuses_a_conversation_past_the_cap(conn: Any) -> None:
    with pytest.raises(psycopg.errors.CheckViolation):
        conn.execute(
            "INSERT INTO hive.queen_conversation (issue, conversation_id, agent, session_id,"
            " bytes, size) VALUES (3, gen_random_uuid(), 'claude', 's', %s, %s)",
            (b"x" * (8 * 1024 * 1024 + 1), 8 * 1024 * 1024 + 1),
        )
