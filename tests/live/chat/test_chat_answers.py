"""A person calls a bot by mention in a real Synapse room and gets that bot's answer,
and only that bot's, from the store; a bot's answer may call another, and the chain
stops three bot messages after the person's (the card)."""

from hive.chat.matrix import DEPTH_KEY
from hive.store import chat as store

from .conftest import add_issue, judged, wait_until


def bodies(seen, user):
    return [s.body for s in seen if s.sender == user.user_id]


def test_the_queen_answers_a_mention_from_the_store_and_only_she_answers(person, bot, chat, db):
    queen, reviewer = bot("queen", "Queen"), bot("reviewer", "Reviewer")
    add_issue(db, 7, "Fix the login page")
    chat(person, {"queen": queen, "reviewer": reviewer})
    asked = person.say(f"{queen.user_id} why has #7 not started?")
    seen = person.wait_for(lambda s: bodies(s, queen))
    (answer,) = [s for s in seen if s.sender == queen.user_id]
    assert answer.body.startswith("#7 has no order yet (Fix the login page).")
    assert answer.content["m.relates_to"] == {"m.in_reply_to": {"event_id": asked}}
    assert answer.content[DEPTH_KEY] == 1
    # the answer is marked sent a moment after the room has it
    (row,) = wait_until(lambda: [r for r in store.rows(db) if r["sent"]], "the row marked sent")
    assert row["cause"] == f"answer:queen:{asked}" and row["sent"] and row["issue"] == 7
    assert row["event_id"] == answer.event_id
    assert bodies(seen, reviewer) == []


def test_a_person_calls_by_display_name_and_the_queen_says_what_runs_and_waits(
    person, bot, chat, db
):
    queen = bot("queen", "Queen")
    add_issue(db, 3, "Add a README")
    chat(person, {"queen": queen})
    person.say("Queen: what runs?")
    seen = person.wait_for(lambda s: bodies(s, queen))
    (answer,) = bodies(seen, queen)
    assert "Running: nothing" in answer and "Waiting to start: #3" in answer


def test_a_message_that_calls_no_bot_owes_nothing(person, bot, chat, db):
    queen = bot("queen", "Queen")
    room = chat(person, {"queen": queen}).room
    person.say("the Queen is slow today")
    marker = person.say(f"{queen.user_id} #99?")
    person.wait_for(lambda s: bodies(s, queen))
    rows = wait_until(lambda: [r for r in store.rows(db) if r["sent"]], "the row marked sent")
    assert [r["cause"] for r in rows] == [f"answer:queen:{marker}"]
    assert "I know no issue #99." in rows[0]["body"]
    assert room.outbox is not None


def test_the_reviewer_answers_its_verdict_and_note(person, bot, chat, db):
    queen, reviewer = bot("queen", "Queen"), bot("reviewer", "Reviewer")
    judged(db, 12, "sendback", "the test for the empty form is missing")
    chat(person, {"queen": queen, "reviewer": reviewer})
    person.say("@Reviewer what about #12?")
    seen = person.wait_for(lambda s: bodies(s, reviewer))
    (answer,) = bodies(seen, reviewer)
    assert answer.startswith("#12, attempt 1: sendback. the test for the empty form is missing")
    assert bodies(seen, queen) == []


def test_the_card_a_chain_stops_three_bot_messages_after_the_persons(person, bot, chat, db):
    """The Queen hands accepted work to the reviewer, the reviewer hands it back to the
    Queen (she merges): a ping-pong the rule ends at the third bot message."""
    queen, reviewer = bot("queen", "Queen"), bot("reviewer", "Reviewer")
    judged(db, 5, "accept", "every criterion met")
    chat(person, {"queen": queen, "reviewer": reviewer})
    person.say(f"{queen.user_id} where is #5?")
    seen = person.wait_for(lambda s: len(bodies(s, queen)) + len(bodies(s, reviewer)) >= 3)
    bot_messages = [s for s in seen if s.sender in (queen.user_id, reviewer.user_id)]
    assert [s.sender for s in bot_messages] == [queen.user_id, reviewer.user_id, queen.user_id]
    assert [s.content[DEPTH_KEY] for s in bot_messages] == [1, 2, 3]
    assert reviewer.user_id in bot_messages[2].body  # the third calls, and is not answered
    # the third message was read (the room went on) and owed nothing
    person.say("after the chain")
    person.wait_for(lambda s: any(m.body == "after the chain" for m in s))
    wait_until(lambda: all(r["sent"] for r in store.rows(db)), "every row sent")
    assert len(store.rows(db)) == 3
