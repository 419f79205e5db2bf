"""Endings in one statement (`end_many`): each ending lands or not exactly as it
would alone (its fence, its state, its bundle, conversation, key rest and NOTIFY), the
rows the statement leaves are the rows as many single endings leave them, and two
processes ending the same orders at once end each exactly once."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import pytest

from hive.agents.conversation import Conversation
from hive.rules.spend import Cost, CostSource
from hive.rules.states import Outcome
from hive.store import orders, pool
from hive.store.bundles import NewBundle
from hive.store.endings import OrderEnding, end, end_many
from hive.store.listen import Listener
from hive.store.orders import Fence, NewOrder
from hive.testing import migrated_database

from . import workers
from .conftest import Child, finish, ready_then_go, running
from .roundtrips import round_trips

RUNNER = "runner-a"
KEY = "k" * 16
RESETS_AT = datetime.now(UTC).replace(microsecond=0) + timedelta(days=1)  # believed: within a week
SESSION = Conversation("claude", "s-1", b'{"sessionId":"s-1"}\n')
WAIT_SECONDS = 10.0
# the race: orders two processes end at once, the same batches, each named the other way
RACE_ORDERS = 300
# the story's own endings before the ones under test (earlier attempts, one ended order)
STORY_ENDINGS = 5
RACE_BATCH = 10
RACE_SECONDS = 120.0


@pytest.fixture
def twin_url(hive_pg_url: str, _hive_template: str) -> Iterator[str]:
    """A second fresh database like `hive_db_url`'s, for the same story told otherwise."""
    yield from migrated_database(hive_pg_url, _hive_template)


def cid(issue: int, attempt: int) -> uuid.UUID:
    """The same conversation ids in both databases, so their rows compare."""
    return uuid.UUID(int=issue * 1000 + attempt)


def claimed(conn: psycopg.Connection[Any], issue: int, attempt: int, **fields: Any) -> Fence:
    new = NewOrder(issue, f"queen-{issue}", "main", conversation_id=cid(issue, attempt), **fields)
    assert orders.insert(conn, new, queued=True) is orders.Insertion.WRITTEN
    got = orders.claim(conn, RUNNER)
    assert got is not None and got.issue == issue
    return got.fence


def story(conn: psycopg.Connection[Any]) -> list[OrderEnding]:
    """Orders 1-8 claimed, with what earlier attempts left (bundles, conversations,
    resting keys, an order already ended), and the endings to write: every column an
    ending may write, a lost claim in the middle, an illegal one, and refusals last (one
    of them lost)."""
    for issue, left in ((1, "old one"), (2, "stale bundle")):
        earlier = claimed(conn, issue, 0)
        old = NewBundle(f"queen-{issue}", "main", None, "1" * 40, left.encode())
        # issue 1's agent left a conversation too, which an ending resuming none keeps
        said = SESSION if issue == 1 else None
        ending = OrderEnding(
            earlier, Outcome.ENDED_BADLY, bundle=old, keeps_conversation=True, conversation=said
        )
        assert end(conn, ending).landed
    for issue in (3, 5):
        earlier = claimed(conn, issue, 0)
        keep = OrderEnding(
            earlier, Outcome.ENDED_BADLY, keeps_conversation=True, conversation=SESSION
        )
        assert end(conn, keep).landed
    for index, strikes in ((0, 2), (1, 1)):
        conn.execute(
            "INSERT INTO hive.queen_key_rest (key_index, key_fingerprint, strikes, rests_until)"
            " VALUES (%s, %s, %s, %s)",
            (index, KEY, strikes, RESETS_AT),
        )
    fences = {
        1: claimed(conn, 1, 1, key_index=0, key_fingerprint=KEY),
        2: claimed(conn, 2, 1, detail="the Queen's guess", provider="openai", model="m-0"),
        3: claimed(conn, 3, 1),
        4: claimed(conn, 4, 1),
        5: claimed(conn, 5, 1),
        6: claimed(conn, 6, 1),
        7: claimed(conn, 7, 1, key_index=1, key_fingerprint=KEY),
        8: claimed(conn, 8, 1, key_index=2, key_fingerprint=KEY),
    }
    assert end(conn, OrderEnding(fences[6], Outcome.FINISHED)).landed  # ended before
    return [
        OrderEnding(
            fences[1],
            Outcome.FINISHED,
            "all done",
            input_tokens=10,
            output_tokens=20,
            provider="anthropic",
            model="m-1",
            cost=Cost(0.25, CostSource.AGENT),
            salvaged_sha="2" * 40,
            salvaged_files=("a.py", "b/c.py"),
            bundle=NewBundle("queen-1", "main", "3" * 40, "4" * 40, b"bundle one"),
        ),
        OrderEnding(
            fences[2],
            Outcome.FINISHED,
            keeps_conversation=True,
            conversation=Conversation("codex", "s-2", b"x"),
        ),
        OrderEnding(fences[3], Outcome.ENDED_BADLY, "stopped", keeps_conversation=True),
        OrderEnding(Fence(4, cid(4, 1), "runner-b"), Outcome.FINISHED),  # its claim was lost
        # its agent resumes none: the conversation it names is not stored, the earlier kept
        OrderEnding(
            fences[5], Outcome.HANDED_BACK, conversation=Conversation("claude", "s-5", b"y")
        ),
        OrderEnding(fences[6], Outcome.FINISHED),  # ended already: illegal
        OrderEnding(Fence(8, cid(8, 1), "runner-b"), Outcome.REFUSED),  # lost: rests no key
        OrderEnding(fences[7], Outcome.QUOTA_EXHAUSTED, resets_at=RESETS_AT),
    ]


def rows(conn: psycopg.Connection[Any]) -> dict[str, list[tuple[Any, ...]]]:
    """What the endings wrote, each clock read as whether it is set."""
    tables = {
        "dispatch": "SELECT issue, conversation_id, started, detail, claimed_by,"
        " finished_at IS NULL, outcome, outcome_code::text, salvaged_at IS NULL, salvaged_sha,"
        " salvaged_files, provider, model, input_tokens, output_tokens, cost_usd, cost_source,"
        " attempt FROM hive.queen_dispatch ORDER BY issue",
        "history": "SELECT issue, snapshot->>'outcome' FROM hive.queen_dispatch_history"
        " ORDER BY issue, id",
        "bundle": "SELECT issue, branch, base, base_sha, head_sha, runner, bytes, size"
        " FROM hive.queen_bundle ORDER BY issue",
        "conversation": "SELECT issue, conversation_id, agent, session_id, bytes, size, note"
        " FROM hive.queen_conversation ORDER BY issue",
        "key_rest": "SELECT key_index, key_fingerprint, strikes, rests_until, reason"
        " FROM hive.queen_key_rest ORDER BY key_index",
    }
    return {name: conn.execute(sql).fetchall() for name, sql in tables.items()}


def heard(listener: Listener, count: int) -> list[str]:
    """The payloads of the next `count` notifications of an ending, within the wait
    (a queued order's, which name the issue alone, are passed over)."""
    got: list[str] = []
    deadline = time.monotonic() + WAIT_SECONDS
    while len(got) < count and time.monotonic() < deadline:
        payloads = listener.wait(deadline - time.monotonic()).payloads
        got.extend(p for p in payloads if p.startswith("ended:"))
    return sorted(got)


def test_endings_in_one_statement_leave_the_rows_single_endings_leave(
    conn: Any, hive_db_url: str, twin_url: str
) -> None:
    with Listener(hive_db_url) as alone_heard:
        endings = story(conn)
        heard(alone_heard, STORY_ENDINGS)
        alone = [end(conn, e) for e in endings]
        alone_payloads = heard(alone_heard, 5)
    with pool.connect(twin_url) as twin, Listener(twin_url) as together_heard:
        assert story(twin) == endings
        heard(together_heard, STORY_ENDINGS)
        together = end_many(twin, endings)
        together_payloads = heard(together_heard, 5)
        assert rows(twin) == rows(conn)
    assert together == alone
    assert [m.landed for m in together] == [True, True, True, False, True, False, False, True]
    assert together[5].illegal and not together[3].illegal
    assert together_payloads == alone_payloads == [f"ended:{i}" for i in (1, 2, 3, 5, 7)]


def test_a_lost_claim_in_the_middle_of_a_batch_refuses_that_ending_only(conn: Any) -> None:
    fences = [claimed(conn, issue, 1) for issue in (1, 2, 3)]
    assert orders.release(conn, fences[1])
    taken = orders.claim(conn, "runner-b")  # the middle one is another runner's now
    assert taken is not None and taken.issue == 2
    bundle = NewBundle("queen-2", "main", None, "0" * 40, b"b")
    endings = [OrderEnding(f, Outcome.FINISHED, bundle=bundle) for f in fences]
    with round_trips(conn) as trips:
        moves = end_many(conn, endings[:1] + endings[2:])
    assert trips.count == 1, trips.trace  # every ending in one statement
    assert [m.landed for m in moves] == [True, True]
    moves = end_many(conn, endings)
    assert [(m.landed, m.illegal) for m in moves] == [(False, True), (False, False), (False, True)]
    middle = orders.get(conn, 2)
    assert middle is not None and middle.claimed_by == "runner-b" and middle.finished_at is None
    stored = conn.execute("SELECT issue FROM hive.queen_bundle ORDER BY issue").fetchall()
    assert stored == [(1,), (3,)]


def test_endings_no_statement_may_hold_are_refused_with_a_sentence(conn: Any) -> None:
    fence = claimed(conn, 1, 1)
    twice = [OrderEnding(fence, Outcome.FINISHED), OrderEnding(fence, Outcome.ENDED_BADLY)]
    with pytest.raises(ValueError, match="an issue twice"):
        end_many(conn, twice)
    other = claimed(conn, 2, 1)
    with pytest.raises(ValueError, match="a refusal first"):
        end_many(conn, [OrderEnding(fence, Outcome.REFUSED), OrderEnding(other, Outcome.FINISHED)])
    assert end_many(conn, []) == []
    assert orders.listing(conn, unfinished_only=True) != []


def reversed_batches(fences: list[Fence]) -> list[Fence]:
    """The same batches in the same sequence, each in the opposite order: every batch
    meets its twin in the other process, rows named the other way round."""
    return [
        f for at in range(0, len(fences), RACE_BATCH) for f in fences[at : at + RACE_BATCH][::-1]
    ]


def test_two_processes_ending_the_same_orders_in_batches_end_each_exactly_once(
    conn: Any, hive_db_url: str
) -> None:
    with conn.transaction():
        for issue in range(1, RACE_ORDERS + 1):
            orders.insert(conn, NewOrder(issue, f"queen-{issue}", "main"), queued=True)
    fences = [got.fence for got in orders.claim_many(conn, RUNNER, RACE_ORDERS)]
    assert len(fences) == RACE_ORDERS
    children = [
        Child(workers.end_batches, hive_db_url, order, RACE_BATCH, name=name)
        for name, order in (("up", fences), ("down", reversed_batches(fences)))
    ]
    with running(children):
        ready_then_go(children, WAIT_SECONDS)
        landed: Sequence[int] = [i for child in children for i in child.receive(RACE_SECONDS)]
        finish(children, WAIT_SECONDS)
    assert sorted(landed) == list(range(1, RACE_ORDERS + 1))
    assert orders.listing(conn, unfinished_only=True) == []
