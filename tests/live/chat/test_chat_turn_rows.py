"""A bee's answer while its turn runs, in the store (hive.store.chat_turns): one claim at a
time, a claim that ran out or was let go is claimed again as the next try, a stale claim
writes no answer, what each turn spent is the day's, and a row owed or let go wakes the
processes that run turns."""

from __future__ import annotations

from datetime import UTC, datetime

from hive.rules.chat import Kind
from hive.rules.spend import day_start
from hive.store import chat as store
from hive.store import chat_turns, spend
from hive.store.chat_turns import CHAT_CHANNEL, Spent
from hive.store.listen import Listener, Reason

from .conftest import add_issue


def owe(db, n: int, body: str | None = None, issue: int = 12) -> int:
    row = store.owe(
        db, store.Owed(f"answer:claude:${n}", "claude", Kind.ANSWER, issue=issue, body=body)
    )
    assert row is not None
    return row


def test_one_claim_at_a_time_and_a_let_go_row_is_the_next_try(db):
    add_issue(db, 12, "Fix it")
    first, second = owe(db, 1), owe(db, 2)
    owe(db, 3, body="a store bot's answer: never a turn")
    a = chat_turns.claim(db, "runner-a", 60)
    b = chat_turns.claim(db, "runner-b", 60)
    assert a is not None and b is not None
    assert (a.row_id, a.tries, a.title, b.row_id) == (first, 1, "Fix it", second)
    assert chat_turns.claim(db, "runner-c", 60) is None  # both held
    assert chat_turns.let_go(db, a, "runner-a")
    again = chat_turns.claim(db, "runner-a", 60)  # the same runner, restarted
    assert again is not None and (again.row_id, again.tries) == (first, 2)
    # the first claim is stale: it writes no answer, and lets nothing go
    assert not chat_turns.answer(db, a, "runner-a", "late")
    assert not chat_turns.let_go(db, a, "runner-a")
    assert chat_turns.answer(db, again, "runner-a", "the answer")
    assert [r["body"] for r in store.rows(db)][:2] == ["the answer", None]


def test_a_claim_that_ran_out_is_claimed_again(db):
    owe(db, 1)
    held = chat_turns.claim(db, "runner-a", 0)
    assert held is not None
    again = chat_turns.claim(db, "runner-b", 60)
    assert again is not None and (again.row_id, again.tries) == (held.row_id, 2)


def test_a_process_lets_go_at_its_start_what_its_earlier_life_held(db):
    owe(db, 1)
    owe(db, 2)
    assert chat_turns.claim(db, "runner-a", 60) is not None
    assert chat_turns.claim(db, "runner-b", 60) is not None
    assert chat_turns.let_go_mine(db, "runner-a") == 1
    again = chat_turns.claim(db, "runner-c", 60)
    assert again is not None and again.tries == 2


def test_a_composed_answer_waits_from_when_its_turn_wrote_it(db):
    row = owe(db, 1)
    with db.connection() as conn:
        conn.execute(
            "UPDATE hive.chat_outbox SET created_at = now() - interval '1 hour' WHERE id = %s",
            (row,),
        )
    held = chat_turns.claim(db, "runner-a", 60)
    assert held is not None and chat_turns.answer(db, held, "runner-a", "late but here")
    (waiting,), now = store.waiting(db)
    assert now is not None and now - waiting.since < 60  # the clocks' bound is not spent


def test_what_a_chat_turn_spent_is_the_days_spend_and_the_issues(db):
    add_issue(db, 12)
    row = owe(db, 1)
    start = day_start(datetime.now(UTC))
    before = spend.of_issue(db, 12)
    chat_turns.spend(db, row, Spent(0, 100, 20, 0.25))
    chat_turns.spend(db, row, Spent(None, 10, 2, None))  # a second try: cost unknown
    assert spend.since(db, start) == 0.25
    (by_key,) = spend.by_key_since(db, start)
    assert (by_key.key_index, by_key.input_tokens, by_key.output_tokens) == (0, 110, 22)
    after = spend.of_issue(db, 12)
    assert after.cost_usd - before.cost_usd == 0.25 and after.attempts == before.attempts + 1


def test_a_row_owed_or_let_go_wakes_the_processes_that_run_turns(db, hive_db_url):
    with Listener(hive_db_url, channels=(CHAT_CHANNEL,)) as listener:
        owe(db, 1, body="composed: no turn")
        row = owe(db, 2)
        heard = listener.wait(5)
        assert heard.reason == Reason.NOTIFIED and heard.payloads == (str(row),)
        held = chat_turns.claim(db, "runner-a", 60)
        assert held is not None
        assert listener.wait(0.3).reason == Reason.TIMEOUT  # a claim wakes nobody
        chat_turns.let_go(db, held, "runner-a")
        assert listener.wait(5).payloads == (str(row),)


def test_a_turn_no_process_claimed_in_time_is_answered_with_a_sentence(db):
    from hive.chat.turns import answer_unclaimed
    from hive.rules.chat_turn import UNCLAIMED_SECONDS, unclaimed

    claimed = owe(db, 1)
    assert chat_turns.claim(db, "runner-a", 60) is not None  # a process runs its turn
    old, fresh = owe(db, 2), owe(db, 3)
    with db.connection() as conn:
        conn.execute(
            "UPDATE hive.chat_outbox SET created_at = now() - make_interval(secs => %s)"
            " WHERE id IN (%s, %s)",
            (UNCLAIMED_SECONDS + 1, old, claimed),
        )
    assert answer_unclaimed(db) == 1
    bodies = {r["id"]: r["body"] for r in store.rows(db)}
    assert bodies == {claimed: None, old: unclaimed(12), fresh: None}
    assert answer_unclaimed(db) == 0
