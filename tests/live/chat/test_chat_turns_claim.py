"""At its claim a bee's turn asks the rule again (hive.chat.turns, hive.rules.chat_turn):
the spend cap or the credit reached since the question is refused there, a question
whose turn restarts cut twice is answered with a sentence, and neither runs a turn."""

from __future__ import annotations

import sys
import uuid

import pytest

from hive.chat.turns import ChatTurns, TurnsConfig
from hive.git.repo import open_checkout
from hive.rules.chat import Kind
from hive.rules.chat_turn import TURN_TRIES_MAX
from hive.rules.credits import Terms
from hive.rules.keys import key_slots
from hive.store import chat as store
from hive.store import chat_turns, keyrests
from hive.testing import make_repo

from .conftest import add_issue


@pytest.fixture
def turns(db, tmp_path):
    """ChatTurns(**config) with an agent that leaves a mark when it runs."""
    checkout = open_checkout(str(make_repo(tmp_path / "repo")), tmp_path / "work", "main")
    mark = tmp_path / "ran"
    agent = f"command:{sys.executable} -c \"open({str(mark)!r}, 'w'); print('ran')\""

    def make(**config):
        return ChatTurns(db, checkout, TurnsConfig(by="runner-a", agent=agent, **config))

    make.ran = mark.exists  # type: ignore[attr-defined]
    yield make
    checkout.repo.close()


def owe(db, issue=12):
    row = store.owe(
        db, store.Owed(f"answer:claude:${uuid.uuid4()}", "claude", Kind.ANSWER, issue=issue)
    )
    assert row is not None
    return row


def body(db, row):
    return next(r["body"] for r in store.rows(db) if r["id"] == row)


def test_the_cap_reached_since_the_question_is_refused_at_the_claim(db, turns):
    add_issue(db, 12)
    row = owe(db)
    with db.connection() as conn:  # spent since the question was owed
        conn.execute(
            "INSERT INTO hive.queen_dispatch (issue, branch, base, started, conversation_id,"
            " finished_at, outcome, outcome_code, cost_usd) VALUES (12, 'queen-12', 'main',"
            " true, %s, now(), 'finished', 'finished', 2.5)",
            (uuid.uuid4(),),
        )
    done = turns(spend_cap_usd=2.0).run_once()
    assert (done.row, done.step) == (row, "refuse")
    assert body(db, row).startswith("I run no turn for #12: today's spend $2.50 reached")
    assert not turns.ran()


def test_zero_credit_at_the_claim_is_refused(db, turns):
    add_issue(db, 12)
    row = owe(db)
    assert turns(credits=Terms()).run_once().step == "refuse"
    assert "its account default is at zero" in body(db, row)
    assert not turns.ran()


def test_a_turn_cut_as_often_as_it_may_be_is_answered_with_a_sentence(db, turns):
    add_issue(db, 12)
    row = owe(db)
    for _ in range(TURN_TRIES_MAX):  # each claim cut by a restart
        held = chat_turns.claim(db, "runner-a", 60)
        assert held is not None and chat_turns.let_go(db, held, "runner-a")
    assert turns().run_once().step == "cut"
    assert body(db, row) == (
        f"Restarts of the hive cut my turn on #12 {TURN_TRIES_MAX} times; I run it no more."
        " Ask me again."
    )
    assert not turns.ran()


def test_an_uncut_turn_runs(db, turns):
    add_issue(db, 12)
    row = owe(db)
    assert turns().run_once().step == "run"
    assert body(db, row) == "ran" and turns.ran()


KEYS = key_slots({"HIVE_WORKER_KEY": "key-zero", "HIVE_WORKER_KEY_2": "key-one"})


def rest(db, slot, seconds=120):
    """`slot`'s key rests `seconds` more, as after a provider's refusal."""
    with db.connection() as conn:
        conn.execute(
            "INSERT INTO hive.queen_key_rest (key_index, key_fingerprint, strikes, rests_until,"
            " reason) VALUES (%s, %s, 1, now() + make_interval(secs => %s), 'quota exhausted')",
            (slot.index, slot.fingerprint, seconds),
        )


def turn_key(db, row):
    with db.connection() as conn:
        sql = "SELECT turn_key_index FROM hive.chat_outbox WHERE id = %s"
        (key,) = conn.execute(sql, (row,)).fetchone()
    return key


def chat_turns_counted(turns_, step):
    return turns_.metrics.chat_turns.labels(step=step)._value.get()


def test_a_turn_takes_a_key_that_does_not_rest(db, turns):
    add_issue(db, 12)
    row = owe(db)
    rest(db, KEYS[0])
    work = turns(keys=KEYS)
    assert work.run_once().step == "run"
    assert turns.ran() and body(db, row) == "ran"
    assert turn_key(db, row) == KEYS[1].index
    assert chat_turns_counted(work, "run") == 1


def test_a_turn_whose_every_key_rests_is_answered_with_a_sentence_and_runs_not(db, turns):
    add_issue(db, 12)
    row = owe(db)
    for slot in KEYS:
        rest(db, slot)
    work = turns(keys=KEYS)
    assert work.run_once().step == "rests"
    assert not turns.ran()
    said = body(db, row)
    assert said.startswith("Every key I may run my turn on #12 with rests") and "s more" in said
    assert chat_turns_counted(work, "rests") == 1 and chat_turns_counted(work, "run") == 0


def test_a_chat_turns_spend_is_counted_in_the_spend_metric(db, tmp_path):
    add_issue(db, 12)
    owe(db)
    checkout = open_checkout(str(make_repo(tmp_path / "repo")), tmp_path / "work", "main")
    usage = "HIVE-USAGE: provider=acme model=m input=100 output=20 cost_usd=0.25"
    config = TurnsConfig(by="runner-a", agent=f"command:echo '{usage}'", keys=KEYS[:1])
    try:
        work = ChatTurns(db, checkout, config, lambda used: used.cost_usd if used else None)
        assert work.run_once().step == "run"
    finally:
        checkout.repo.close()
    assert work.metrics.spend_usd.labels(key_index="0")._value.get() == 0.25


@pytest.mark.parametrize(
    ("kind", "at_least_seconds"),
    [("rate_limit", 1), ("quota", 3000)],  # 5 s doubling; the quota rest (3600 s)
)
def test_a_chat_turn_the_provider_refused_rests_its_key_and_the_next_takes_another(
    db, tmp_path, kind, at_least_seconds
):
    add_issue(db, 12)
    first = owe(db)
    checkout = open_checkout(str(make_repo(tmp_path / "repo")), tmp_path / "work", "main")
    config = TurnsConfig(by="runner-a", agent=f"command:echo 'HIVE-REFUSAL: {kind}'", keys=KEYS)
    try:
        work = ChatTurns(db, checkout, config)
        assert work.run_once().step == "run"
        assert "The provider refused my turn on #12" in body(db, first)
        [rested] = keyrests.resting(db)
        assert (rested.key_index, rested.key_fingerprint) == (0, KEYS[0].fingerprint)
        assert rested.seconds_left >= at_least_seconds
        second = owe(db)
        assert work.run_once().step == "run"
        assert turn_key(db, second) == KEYS[1].index  # the rested key is skipped
    finally:
        checkout.repo.close()
