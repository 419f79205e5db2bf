"""An ending is one round trip: the fenced end, its bundle, the conversation its agent
left and the NOTIFY that it ended go in one statement, so the conversation is stored if
and only if the ending landed. A refusal's ending rests its key in the same transaction,
reading the order once more at most. A start reads the bundle and the conversation the
last attempt left in one query."""

from __future__ import annotations

from typing import Any

import psycopg

from hive.agents.conversation import Conversation
from hive.rules.states import Outcome
from hive.store import bundles, conversations, endings, orders
from hive.store.bundles import NewBundle
from hive.store.endings import OrderEnding
from hive.store.listen import Listener
from hive.store.orders import Fence

from .conftest import queue
from .roundtrips import round_trips

SESSION = Conversation("claude", "s-1", b'{"sessionId":"s-1"}\n')
BUNDLE = NewBundle("queen-1", "main", None, "0" * 40, b"bundle bytes")
WAIT_SECONDS = 10.0


def claimed(conn: psycopg.Connection[Any], issue: int, **fields: Any) -> Fence:
    queue(conn, issue, **fields)
    got = orders.claim(conn, "runner-a")
    assert got is not None and got.issue == issue
    return got.fence


def test_an_ending_with_its_bundle_conversation_and_notify_is_one_round_trip(
    conn: Any, hive_db_url: str
) -> None:
    fence = claimed(conn, 1)
    ending = OrderEnding(
        fence, Outcome.FINISHED, bundle=BUNDLE, keeps_conversation=True, conversation=SESSION
    )
    with Listener(hive_db_url) as queen:
        with round_trips(conn) as trips:
            assert endings.end(conn, ending).landed
        assert trips.count == 1, trips.trace
        assert queen.wait(WAIT_SECONDS).payloads == ("ended:1",)
    assert conversations.get(conn, 1) == SESSION
    stored = bundles.get(conn, 1)
    assert stored is not None and stored.data == BUNDLE.data


def test_a_fenced_out_ending_stores_no_conversation_and_notifies_nothing(
    conn: Any, hive_db_url: str
) -> None:
    fence = claimed(conn, 2)
    stranger = Fence(2, fence.conversation_id, "runner-b")
    with Listener(hive_db_url) as queen:
        lost = OrderEnding(
            stranger, Outcome.FINISHED, keeps_conversation=True, conversation=SESSION
        )
        assert not endings.end(conn, lost).landed
        assert conversations.get(conn, 2) is None
        ours = OrderEnding(fence, Outcome.FINISHED, keeps_conversation=True, conversation=SESSION)
        assert endings.end(conn, ours).landed
        # the first NOTIFY heard is the landed ending's: the refused one sent none
        assert queen.wait(WAIT_SECONDS).payloads == ("ended:2",)
    assert conversations.get(conn, 2) == SESSION
    later = Conversation("claude", "s-2", b'{"sessionId":"s-2"}\n')
    again = OrderEnding(fence, Outcome.ENDED_BADLY, keeps_conversation=True, conversation=later)
    assert not endings.end(conn, again).landed  # ended already: too late
    assert conversations.get(conn, 2) == SESSION


def test_an_agent_that_left_none_drops_the_earlier_and_one_that_resumes_none_keeps_it(
    conn: Any,
) -> None:
    first = claimed(conn, 3)
    ending = OrderEnding(first, Outcome.ENDED_BADLY, keeps_conversation=True, conversation=SESSION)
    assert endings.end(conn, ending).landed
    second = claimed(conn, 3)
    assert endings.end(conn, OrderEnding(second, Outcome.ENDED_BADLY)).landed  # resumes none
    assert conversations.get(conn, 3) == SESSION
    third = claimed(conn, 3)
    assert endings.end(conn, OrderEnding(third, Outcome.FINISHED, keeps_conversation=True)).landed
    assert conversations.get(conn, 3) is None


def test_a_refused_ending_rests_its_key_in_five_round_trips(conn: Any) -> None:
    # BEGIN, the ending, the key's rest (made and locked), the rest written, COMMIT
    fence = claimed(conn, 4, key_index=0, key_fingerprint="f" * 16)
    with round_trips(conn) as trips:
        assert endings.end(conn, OrderEnding(fence, Outcome.REFUSED)).landed
    assert trips.count == 5, trips.trace
    row = conn.execute(
        "SELECT strikes, rests_until > now() FROM hive.queen_key_rest WHERE key_index = 0"
    ).fetchone()
    assert row == (1, True)


def test_a_start_reads_the_bundle_and_the_conversation_in_one_round_trip(conn: Any) -> None:
    fence = claimed(conn, 5)
    ending = OrderEnding(
        fence, Outcome.FINISHED, bundle=BUNDLE, keeps_conversation=True, conversation=SESSION
    )
    assert endings.end(conn, ending).landed
    with round_trips(conn) as trips:
        left = conversations.earlier(conn, 5, bundle=True, conversation=True)
    assert trips.count == 1, trips.trace
    assert (left.bundle, left.conversation) == (BUNDLE.data, SESSION)
    assert conversations.earlier(conn, 5, bundle=False, conversation=True).bundle is None
    assert conversations.earlier(conn, 5, bundle=True, conversation=False).conversation is None
    nothing = conversations.earlier(conn, 6, bundle=True, conversation=True)
    assert (nothing.bundle, nothing.conversation) == (None, None)
