"""The clocks against a real Synapse: a bot waits its gap, the room takes at most its cap
a minute, and what they hold back is counted, waits in the store and is sent later."""

import itertools

from hive.store import chat as store

from .conftest import wait_until


def sent_rows(db):
    return [r for r in store.rows(db) if r["sent"]]


def held(room, kind="answer"):
    return room.metrics.chat_held.labels(kind=kind)._value.get()


def test_a_bot_waits_its_gap_between_its_messages(person, bot, chat, db):
    queen = bot("queen", "Queen")
    room = chat(person, {"queen": queen}, gap_seconds=1.0).room
    for n in range(3):
        person.say(f"{queen.user_id} question {n}")
    wait_until(lambda: len(sent_rows(db)) == 3, "three answers sent", timeout=30)
    with db.connection() as conn:
        times = [
            t
            for (t,) in conn.execute(
                "SELECT extract(epoch FROM sent_at)::float8 FROM hive.chat_outbox ORDER BY sent_at"
            )
        ]
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert all(g >= 1.0 for g in gaps), gaps
    assert held(room) >= 1
    seen = person.wait_for(lambda s: len(person.from_(queen.user_id)) == 3)
    assert len([s for s in seen if s.sender == queen.user_id]) == 3


def test_the_room_takes_at_most_its_cap_a_minute_and_holds_the_rest(person, bot, chat, db):
    queen, reviewer = bot("queen", "Queen"), bot("reviewer", "Reviewer")
    room = chat(person, {"queen": queen, "reviewer": reviewer}, per_minute=2).room
    person.say(f"{queen.user_id} one")
    person.say(f"{reviewer.user_id} two")
    person.say(f"{queen.user_id} three")
    wait_until(lambda: len(store.rows(db)) == 3, "three rows owed")
    wait_until(lambda: held(room) == 1, "the third held back")
    assert len(sent_rows(db)) == 2
    waiting = [r for r in store.rows(db) if not r["sent"]]
    assert [r["body"] is not None for r in waiting] == [True]
    assert room.metrics.chat_dropped.labels(kind="answer")._value.get() == 0
