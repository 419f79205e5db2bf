"""An answer owed to a person is a row before it is a message: a crash between the send
and its mark, a Queen's restart and a Synapse restart lose none and send none twice."""

import pytest

from hive.chat.config import BotToken, ChatConfig
from hive.chat.room import Room
from hive.metrics import HiveMetrics
from hive.rules.chat import Clocks
from hive.store import chat as store

from .conftest import wait_until


def sent_rows(db):
    return [r for r in store.rows(db) if r["sent"]]


def test_a_crash_between_the_send_and_its_mark_sends_once(person, bot, db, monkeypatch):
    queen = bot("queen", "Queen")
    config = ChatConfig(
        person.server.url, person.alias, (BotToken("queen", queen.access_token),), Clocks(0, 600)
    )
    first = Room(db, config, HiveMetrics())
    first.run_once()  # joins; the room is read from here on
    person.say(f"{queen.user_id} are you there?")

    def crash(*args):
        raise RuntimeError("the process died after the send")

    monkeypatch.setattr(store, "sent", crash)
    with pytest.raises(RuntimeError):
        wait_until(lambda: first.run_once().owed, "the answer owed")
    monkeypatch.undo()
    (row,) = store.rows(db)
    assert not row["sent"]  # posted, but not marked
    again = Room(db, config, HiveMetrics())  # the Queen after her restart
    wait_until(lambda: again.run_once().sent, "the row sent again")
    (row,) = store.rows(db)
    assert row["sent"]
    person.say("after")
    seen = person.wait_for(lambda s: any(m.body == "after" for m in s))
    answers = [s for s in seen if s.sender == queen.user_id]
    assert [a.event_id for a in answers] == [row["event_id"]]


def test_a_queen_restart_sends_what_the_clocks_held_once(person, bot, chat, db):
    queen = bot("queen", "Queen")
    chat_stop = chat(person, {"queen": queen}, gap_seconds=3.0)
    person.say(f"{queen.user_id} first")
    person.say(f"{queen.user_id} second")
    wait_until(lambda: len(store.rows(db)) == 2 and sent_rows(db), "one sent, one held")
    chat_stop.stop()
    assert len(sent_rows(db)) == 1
    chat(person, {"queen": queen}, gap_seconds=3.0)  # the Queen again
    wait_until(lambda: len(sent_rows(db)) == 2, "the held answer sent after the restart")
    person.wait_for(lambda s: len(person.from_(queen.user_id)) == 2)
    person.say("after")
    person.wait_for(lambda s: any(m.body == "after" for m in s))
    assert len(person.from_(queen.user_id)) == 2 and len(store.rows(db)) == 2


def test_a_synapse_restart_loses_no_answer_and_sends_none_twice(person, bot, chat, db, homeserver):
    queen = bot("queen", "Queen")
    chat(person, {"queen": queen}, gap_seconds=2.0)
    person.say(f"{queen.user_id} first")
    person.say(f"{queen.user_id} second")
    wait_until(lambda: len(store.rows(db)) == 2 and sent_rows(db), "one sent, one held")
    homeserver.restart()
    wait_until(lambda: len(sent_rows(db)) == 2, "the held answer sent after the restart")
    person.say(f"{queen.user_id} third, asked after the restart")
    wait_until(lambda: len(sent_rows(db)) == 3, "the question after the restart answered")
    person.wait_for(lambda s: len(person.from_(queen.user_id)) == 3)
    assert len(store.rows(db)) == 3
