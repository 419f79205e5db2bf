"""The Queen posts the moves a team wants to see, one line each, once: merged, sent back
with the note, escalated, a key resting. And the chat runs in `hive serve`'s tree."""

import uuid

from hive.chat.moves import owe_moves
from hive.store import chat as store

from .conftest import add_issue, wait_until


def test_the_queen_posts_each_move_once_in_one_line(person, bot, chat, db):
    queen = bot("queen", "Queen")
    running = chat(person, {"queen": queen})
    add_issue(db, 21)
    add_issue(db, 22)
    with db.connection() as conn:
        for number, verdict, note in (
            (21, "sendback", "the form test\nis missing"),
            (22, "escalate", ""),
        ):
            conn.execute(
                "INSERT INTO hive.queen_dispatch (issue, branch, base, started, conversation_id,"
                " finished_at, outcome, outcome_code, review_state, review_note, reviewed_at)"
                " VALUES (%s, %s, 'main', true, %s, now(), 'finished', 'finished', %s, %s,"
                " now())",
                (number, f"queen-{number}", uuid.uuid4(), verdict, note),
            )
        conn.execute(
            "UPDATE hive.queen_dispatch SET review_state = 'accept', merged_sha = %s,"
            " merged_at = now() WHERE issue = 22",
            ("ab" * 20,),
        )
        conn.execute(
            "INSERT INTO hive.queen_key_rest (key_index, strikes, rests_until, reason)"
            " VALUES (1, 1, now() + interval '5 minutes', 'quota exhausted')"
        )
    seen = person.wait_for(lambda s: len(person.from_(queen.user_id)) >= 3)
    lines = sorted(s.body for s in seen if s.sender == queen.user_id)
    assert lines[0] == "#21 sent back (attempt 1): the form test is missing"
    assert lines[1] == f"#22 merged as {'ab' * 6}."
    assert lines[2].startswith("Key 1 rests until ") and lines[2].endswith("(quota exhausted).")
    assert all("\n" not in line for line in lines)
    # looked at again: nothing more is owed
    moves = running.room.metrics.chat_messages.labels(kind="move")
    wait_until(lambda: moves._value.get() == 3, "three moves counted")
    running.stop()
    assert owe_moves(db, person.alias, 0.0) == 0
    assert len(store.rows(db)) == 3


def test_the_chat_runs_in_the_hives_tree_and_answers(person, bot, hive_tree, hive_db_url):
    queen = bot("queen", "Queen")
    hive = hive_tree(
        CHAT="matrix",
        MATRIX_URL=person.server.url,
        MATRIX_ROOM=person.alias,
        MATRIX_TOKEN_QUEEN=queen.access_token,
        CHAT_GAP_SECONDS="0",
    )
    with hive.runtime.db.connection() as conn:
        conn.execute("INSERT INTO hive.queen_issue (number, title) VALUES (4, 'four')")
    wait_until(
        lambda: store.cursor(hive.runtime.db, person.alias)[0] is not None, "the Queen joined"
    )
    person.say(f"{queen.user_id} #4?")
    seen = person.wait_for(lambda s: person.from_(queen.user_id))
    first = next(s for s in seen if s.sender == queen.user_id)
    assert first.body.startswith("#4 has no order yet (four).")


def test_the_spend_cap_reached_is_posted_once_a_day(db):
    add_issue(db, 31)
    with db.connection() as conn:
        conn.execute(
            "INSERT INTO hive.queen_dispatch (issue, branch, base, started, conversation_id,"
            " finished_at, outcome, outcome_code, cost_usd) VALUES (31, 'queen-31', 'main',"
            " true, %s, now(), 'finished', 'finished', 2.5)",
            (uuid.uuid4(),),
        )
    assert owe_moves(db, "#cap:hive.test", 5.0) == 0  # under the cap
    assert owe_moves(db, "#cap:hive.test", 2.0) == 1
    assert owe_moves(db, "#cap:hive.test", 2.0) == 0  # once
    (row,) = store.rows(db)
    assert row["cause"].startswith("move:cap:") and row["bot"] == "queen"
    assert row["body"] == (
        "The day's spend cap is reached ($2.50 of $2.00): no new orders until 00:00 UTC."
    )
