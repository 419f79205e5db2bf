"""A bee's bot runs no turn past the day's spend cap or at zero credit: it answers the
refusal's sentence in the room (hive.rules.chat_turn), and a credit grant lets it go on
(its row is then owed for a turn: tests/live/chat/test_chat_bee_turn.py runs it)."""

import uuid
from decimal import Decimal

from hive.rules.chat_turn import NO_ISSUE
from hive.rules.credits import Terms
from hive.store import chat as store
from hive.store import credits

from .conftest import add_issue, wait_until


def bodies(seen, user):
    return [s.body for s in seen if s.sender == user.user_id]


def spent(db, issue, cost_usd):
    with db.connection() as conn:
        conn.execute(
            "INSERT INTO hive.queen_dispatch (issue, branch, base, started, conversation_id,"
            " finished_at, outcome, outcome_code, cost_usd) VALUES (%s, %s, 'main',"
            " true, %s, now(), 'finished', 'finished', %s)",
            (issue, f"queen-{issue}", uuid.uuid4(), cost_usd),
        )


def test_past_the_spend_cap_a_bees_bot_answers_the_refusal(person, bot, chat, db):
    claude = bot("claude", "claude")
    add_issue(db, 12)
    spent(db, 12, 2.5)
    chat(person, {"queen": bot("queen", "Queen"), "claude": claude}, spend_cap_usd=2.0)
    person.say(f"{claude.user_id} why did you touch src/app.py in #12?")
    seen = person.wait_for(lambda s: bodies(s, claude))
    (answer,) = bodies(seen, claude)
    assert answer == (
        "I run no turn for #12: today's spend $2.50 reached HIVE_SPEND_CAP_USD=$2.00;"
        " ask again after 00:00 UTC."
    )


def test_under_the_cap_a_bees_bot_owes_its_turn(person, bot, chat, db):
    claude = bot("claude", "claude")
    add_issue(db, 12)
    spent(db, 12, 1.5)
    chat(person, {"queen": bot("queen", "Queen"), "claude": claude}, spend_cap_usd=2.0)
    person.say(f"{claude.user_id} why did you touch src/app.py in #12?")
    # the loop owes the row with no body: a process that runs bees answers by a turn
    (row,) = wait_until(lambda: store.rows(db), "the answer owed")
    assert (row["bot"], row["issue"], row["body"], row["sent"]) == ("claude", 12, None, False)


def test_at_zero_credit_a_bees_bot_refuses_until_a_grant(person, bot, chat, db):
    claude = bot("claude", "claude")
    add_issue(db, 12)
    chat(person, {"queen": bot("queen", "Queen"), "claude": claude}, credits=Terms())
    person.say(f"{claude.user_id} what is left on #12?")
    seen = person.wait_for(lambda s: bodies(s, claude))
    assert bodies(seen, claude) == [
        "I run no turn for #12: its account default is at zero;"
        " hive credit grant default TOKENS lets me answer."
    ]
    credits.grant(db, "default", 100, Decimal(30))
    person.say(f"{claude.user_id} and now, #12?")
    wait_until(lambda: len(store.rows(db)) == 2, "the second answer owed")
    assert store.rows(db)[1]["body"] is None  # its turn composes it


def test_a_bees_bot_asked_about_no_issue_asks_for_one(person, bot, chat, db):
    claude = bot("claude", "claude")
    chat(person, {"queen": bot("queen", "Queen"), "claude": claude})
    person.say(f"{claude.user_id} what are you doing?")
    seen = person.wait_for(lambda s: bodies(s, claude))
    assert bodies(seen, claude) == [NO_ISSUE]
    wait_until(lambda: all(r["sent"] for r in store.rows(db)), "every row sent")
