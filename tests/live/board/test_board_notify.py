"""The store's hint for the board (migration 0008): while a board listens somewhere, every
change a card shows NOTIFYs `hive_board` with its kind and issue, a heartbeat does not;
while none does, nothing is sent (a NOTIFY costs every committer the notify lock)."""

from __future__ import annotations

import psycopg

from hive.store import board, issues, orders, reports, transcript
from hive.store.issues import NewIssue


def heard(listener: psycopg.Connection) -> list[str]:
    """What the listener was told so far (an empty query lets it read the socket)."""
    listener.execute("SELECT 1")
    return [n.payload for n in listener.notifies(timeout=0.2, stop_after=50)]


def test_each_change_a_card_shows_is_hinted_and_a_heartbeat_is_not(world):
    with psycopg.connect(world.db_url, autocommit=True) as listener:
        listener.execute("LISTEN hive_board")
        board.watch(world.db, "test", 60)
        issues.upsert(world.db, 4, NewIssue(title="four"))
        assert heard(listener) == ["i:4"]
        order = world.queue_order(4)
        assert heard(listener) == ["o:4"]
        claimed = orders.claim(world.db, "runner-1")
        assert claimed is not None
        assert heard(listener) == ["o:4"]
        fence = orders.Fence(4, order.conversation_id, "runner-1")
        assert orders.heartbeat(world.db, fence)
        assert heard(listener) == []
        transcript.append(world.db, order.conversation_id, 4, "say", "hi")
        assert heard(listener) == ["t:4"]
        reports.add(world.db, "a round", "nothing")
        assert heard(listener) == ["r:"]


def test_nothing_is_sent_while_no_board_listens(world):
    with psycopg.connect(world.db_url, autocommit=True) as listener:
        listener.execute("LISTEN hive_board")
        issues.upsert(world.db, 4, NewIssue(title="four"))
        world.queue_order(4)
        assert heard(listener) == []
        board.watch(world.db, "gone", 0)  # a watch that has expired
        issues.upsert(world.db, 4, NewIssue(title="four again"))
        assert heard(listener) == []
        board.watch(world.db, "here", 60)
        issues.upsert(world.db, 4, NewIssue(title="four, watched"))
        assert heard(listener) == ["i:4"]
        board.unwatch(world.db, "here")
        issues.upsert(world.db, 4, NewIssue(title="four, unwatched"))
        assert heard(listener) == []
