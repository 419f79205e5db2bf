"""`queen_conversation`: the conversation an attempt leaves is stored only while the
attempt is its row's, unfinished and its claimant's; a turn that left none drops the
issue's earlier one; the store refuses a size that is not the bytes' or past the cap."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest

from hive.agents.conversation import Conversation, not_kept
from hive.store import conversations, orders
from hive.store.orders import Fence, OrderEnding

from .conftest import queue

SESSION = Conversation("claude", "s-1", b'{"sessionId":"s-1"}\n')


def test_an_attempt_keeps_its_conversation_and_the_next_one_reads_it(conn: Any) -> None:
    order = queue(conn, 1)
    claimed = orders.claim(conn, "runner-a")
    assert claimed is not None
    fence = Fence(1, order.conversation_id, "runner-a")
    assert conversations.keep(conn, fence, SESSION)
    assert conversations.get(conn, 1) == SESSION
    assert conversations.keep(conn, fence, not_kept("claude", "s-1", "too large"))
    assert conversations.get(conn, 1) == Conversation("claude", "s-1", b"", "too large")
    assert conversations.keep(conn, fence, None)  # the turn left none: the earlier goes
    assert conversations.get(conn, 1) is None


def test_a_fenced_out_or_ended_attempt_writes_nothing(conn: Any) -> None:
    order = queue(conn, 2)
    assert orders.claim(conn, "runner-a") is not None
    other = Fence(2, order.conversation_id, "runner-b")  # not the claimant
    assert not conversations.keep(conn, other, SESSION)
    fence = Fence(2, order.conversation_id, "runner-a")
    assert orders.end(conn, OrderEnding(fence, "finished")).landed
    assert not conversations.keep(conn, fence, SESSION)  # ended: too late
    assert conversations.get(conn, 2) is None


def test_the_store_refuses_a_conversation_past_the_cap(conn: Any) -> None:
    with pytest.raises(psycopg.errors.CheckViolation):
        conn.execute(
            "INSERT INTO hive.queen_conversation (issue, conversation_id, agent, session_id,"
            " bytes, size) VALUES (3, gen_random_uuid(), 'claude', 's', %s, %s)",
            (b"x" * (8 * 1024 * 1024 + 1), 8 * 1024 * 1024 + 1),
        )
