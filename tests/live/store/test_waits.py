"""RULES 9 on a real PostgreSQL: a wait moves once, the first resolution wins, and only
the write that moved it wakes the owner."""

import threading
import time
from typing import Any

import psycopg
import pytest

from hive.rules.waits import CANCELLED, EXPIRED, RESOLVED, WAITING
from hive.store import waits

# a test that waits for a row lock gives up after this
LOCK_WAIT_SECONDS = 10.0


def test_a_wait_needs_a_key_a_wake_time_or_both(conn):
    with pytest.raises(ValueError, match="needs a key, a wake time, or both"):
        waits.add(conn, "me")
    with pytest.raises(ValueError, match="empty"):
        waits.add(conn, "me", key=" ")
    with pytest.raises(ValueError, match=r"within 0\.\.86400"):
        waits.add(conn, "me", wake_in_seconds=-1)
    keyed = waits.add(conn, "me", key="approve:1", payload={"n": 1})
    timed = waits.add(conn, "me", wake_in_seconds=30)
    assert (keyed.state, keyed.key, keyed.wake_at, keyed.payload) == (
        WAITING,
        "approve:1",
        None,
        {"n": 1},
    )
    assert timed.key is None and timed.wake_at is not None


def test_the_first_resolution_wins_and_only_it_wakes(conn):
    made = waits.add(conn, "me", key="approve:1")
    (first,) = waits.resolve(conn, "approve:1")
    assert first.wait.id == made.id and first.wait.state == RESOLVED and first.wakes
    assert first.woke_job is None  # no job was parked on it
    assert waits.resolve(conn, "approve:1") == []
    assert waits.cancel(conn, made.id) is None
    got = waits.get(conn, made.id)
    assert got is not None and got.state == RESOLVED


def test_a_cancelled_wait_wakes_nobody_and_resolves_no_more(conn):
    made = waits.add(conn, "me", key="k", wake_in_seconds=0)
    cancelled = waits.cancel(conn, made.id)
    assert cancelled is not None and cancelled.state == CANCELLED
    assert waits.resolve(conn, "k") == []
    assert waits.expire_due(conn) == []


def _blocked_on_a_lock(conn: psycopg.Connection[Any], pid: int) -> None:
    """Return once backend `pid` waits for a row lock (seen in pg_stat_activity)."""
    deadline = time.monotonic() + LOCK_WAIT_SECONDS
    while time.monotonic() < deadline:
        row = conn.execute(
            "SELECT wait_event_type FROM pg_stat_activity WHERE pid = %s", (pid,)
        ).fetchone()
        if row is not None and row[0] == "Lock":
            return
        time.sleep(0.01)  # polling the server's own view of the lock, with a deadline
    raise AssertionError(f"backend {pid} never waited for the lock")


def test_two_resolutions_at_once_move_the_row_once_and_notify_once(conn, hive_db_url):
    made = waits.add(conn, "me", key="approve:1")
    got: list[Any] = []
    with (
        psycopg.connect(hive_db_url) as first,
        psycopg.connect(hive_db_url, autocommit=True) as second,
        psycopg.connect(hive_db_url, autocommit=True) as listener,
    ):
        listener.execute("LISTEN hive_waits")
        second_pid = second.info.backend_pid
        with first.transaction():
            (moved,) = waits.resolve(first, "approve:1")
            racer = threading.Thread(target=lambda: got.append(waits.resolve(second, "approve:1")))
            racer.start()
            _blocked_on_a_lock(conn, second_pid)
        racer.join(LOCK_WAIT_SECONDS)
        assert not racer.is_alive()
        conn.execute("SELECT pg_notify('hive_waits', 'end')")
        heard = []
        for note in listener.notifies(timeout=5):
            heard.append(note.payload)
            if note.payload == "end":
                break
    assert moved.wait.id == made.id and moved.wakes
    assert got == [[]]
    assert heard == [str(made.id), "end"]


def test_a_due_wait_expires_once_and_a_later_one_waits(conn):
    due = waits.add(conn, "me", wake_in_seconds=0)
    later = waits.add(conn, "me", key="k", wake_in_seconds=3600)
    keyed = waits.add(conn, "me", key="k2")
    (moved,) = waits.expire_due(conn)
    assert moved.wait.id == due.id and moved.wait.state == EXPIRED and moved.wakes
    assert waits.expire_due(conn) == []
    for wait in (later, keyed):
        got = waits.get(conn, wait.id)
        assert got is not None and got.state == WAITING
    due_in = waits.due_in_seconds(conn)
    assert due_in is not None and 3590 < due_in <= 3600


def test_expiring_takes_at_most_its_batch(conn):
    for _ in range(3):
        waits.add(conn, "me", wake_in_seconds=0)
    assert len(waits.expire_due(conn, batch=2)) == 2
    assert len(waits.expire_due(conn, batch=2)) == 1


def test_a_claimed_due_wait_is_left_to_its_claimant_and_fenced_on_its_epoch(conn):
    made = waits.add(conn, "me", wake_in_seconds=0)
    (claimed,) = waits.claim_due(conn, "a")
    assert (claimed.id, claimed.epoch, claimed.claimed_by) == (made.id, made.epoch + 1, "a")
    assert waits.claim_due(conn, "b") == []
    assert waits.expire_due(conn) == []  # its claim has not run out
    conn.execute(
        "UPDATE hive.queen_wait SET claim_due_at = now() - interval '1 second' WHERE id = %s",
        (made.id,),
    )
    (again,) = waits.claim_due(conn, "b")
    assert again.epoch == claimed.epoch + 1
    assert waits.expire_claimed(conn, claimed) is None  # the old epoch does not land
    moved = waits.expire_claimed(conn, again)
    assert moved is not None and moved.wait.state == EXPIRED and moved.wakes
    assert waits.expire_claimed(conn, again) is None


def test_a_resolution_beats_a_scheduler_that_claimed_the_row(conn):
    waits.add(conn, "me", key="k", wake_in_seconds=0)
    (claimed,) = waits.claim_due(conn, "a")
    (moved,) = waits.resolve(conn, "k")
    assert moved.wait.state == RESOLVED
    assert waits.expire_claimed(conn, claimed) is None
