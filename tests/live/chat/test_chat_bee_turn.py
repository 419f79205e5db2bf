"""A bee's bot answers by a short turn of the hive's agent (a `command:` one here): the
chat loop owes the row, the process that runs bees claims it and runs the turn in a
scratch tree of the issue's branch, and the answer is the turn's reply; what it spent is
counted in the day's spend and sold with credits on (`hive serve`'s tree in-process)."""

from __future__ import annotations

import sys
import uuid
from decimal import Decimal
from pathlib import Path

from hive.store import chat as store
from hive.store import credits, spend

from .conftest import add_issue, wait_until

AGENT = """\
import os, pathlib, sys
brief = pathlib.Path(os.environ["HIVE_BRIEF_FILE"]).read_text()
question = brief.split("\\n\\n")[1]
print("HIVE-USAGE: input=100 output=20 cost_usd=0.25")
print(f"On #{os.environ['HIVE_ISSUE']} you asked: {question}")
print("I see " + ",".join(sorted(os.listdir("."))))
pathlib.Path("src/app.py").write_text("changed by a chat turn\\n")
"""


def agent(tmp_path: Path, source: str = AGENT) -> str:
    script = tmp_path / f"chat-agent-{uuid.uuid4().hex[:6]}.py"
    script.write_text(source)
    return f"command:{sys.executable} {script}"


def chat_env(person, bots) -> dict[str, str]:
    env = {
        "HIVE_CHAT": "matrix",
        "HIVE_MATRIX_URL": person.server.url,
        "HIVE_MATRIX_ROOM": person.alias,
        "HIVE_CHAT_GAP_SECONDS": "0",
        "HIVE_CHAT_ROOM_PER_MINUTE": "600",
    }
    for name, user in bots.items():
        env[f"HIVE_MATRIX_TOKEN_{name.upper()}"] = user.access_token
    return env


def bodies(person, user):
    return [s.body for s in person.seen if s.sender == user.user_id]


def joined(hive) -> None:
    """Wait until the tree's chat loop joined the room (its cursor is kept)."""
    db = hive.runtime.db

    def cursor():
        with db.connection() as conn:
            return conn.execute("SELECT next_batch FROM hive.chat_cursor").fetchone()

    wait_until(cursor, "the bots joined")


def test_a_bees_bot_answers_by_its_turn_and_counts_its_spend(person, bot, hive_tree, tmp_path):
    claude = bot("claude", "claude")
    bots = {"queen": bot("queen", "Queen"), "claude": claude}
    hive = hive_tree(agent(tmp_path), CREDITS="on", **chat_env(person, bots))
    db = hive.runtime.db
    add_issue(db, 12, "Fix the import")
    credits.grant(db, "default", 1000, Decimal(30))
    joined(hive)
    person.say(f"{claude.user_id} #12 why did you touch src/app.py?")
    person.wait_for(lambda s: bodies(person, claude))
    (answer,) = bodies(person, claude)
    question = f"{claude.user_id} #12 why did you touch src/app.py?"
    assert answer == f"On #12 you asked: {question}\nI see README.md,docs,src"
    # the room may show the answer a moment before its row is marked sent
    wait_until(lambda: [r for r in store.rows(db) if r["bot"] == "claude" and r["sent"]], "sent")
    (row,) = [r for r in store.rows(db) if r["bot"] == "claude"]
    assert row["sent"]
    # its spend is the day's, and it is sold on the issue's account (2 x $0.25 = 100)
    assert spend.since(db, spend_day_start()) == 0.25
    sales = credits.sales_of_issue(db, 12)
    assert [(s["tokens"], s["turn"]) for s in sales] == [(100, f"chat:{row['id']}:1")]
    # what it wrote went nowhere: the scratch tree is gone, the clone's base unchanged
    assert not list((Path(hive.runtime.checkout.workdir) / "chat").iterdir())


def test_a_bees_bot_speaks_for_the_issue_its_thread_names_in_that_thread(
    person, bot, hive_tree, tmp_path
):
    queen, claude = bot("queen", "Queen"), bot("claude", "claude")
    hive = hive_tree(agent(tmp_path), **chat_env(person, {"queen": queen, "claude": claude}))
    add_issue(hive.runtime.db, 12)
    joined(hive)
    root = person.say("#12 touched src/app.py")
    asked = person.say(
        f"{claude.user_id} why did you touch it?",
        **{"m.relates_to": {"rel_type": "m.thread", "event_id": root}},
    )
    person.wait_for(lambda s: bodies(person, claude))
    (answer,) = [s for s in person.seen if s.sender == claude.user_id]
    assert answer.body.startswith(f"On #12 you asked: {claude.user_id} why did you touch it?")
    relates = answer.content["m.relates_to"]
    assert relates["rel_type"] == "m.thread" and relates["event_id"] == root
    assert relates["m.in_reply_to"] == {"event_id": asked}
    assert bodies(person, queen) == []


def test_a_failing_turn_answers_how_it_ended(person, bot, hive_tree, tmp_path):
    codex = bot("codex", "codex")
    bots = {"queen": bot("queen", "Queen"), "codex": codex}
    hive = hive_tree(agent(tmp_path, "import sys\nsys.exit(3)\n"), **chat_env(person, bots))
    add_issue(hive.runtime.db, 5)
    joined(hive)
    person.say("codex: what is left on #5?")
    person.wait_for(lambda s: bodies(person, codex))
    assert bodies(person, codex) == ["My turn on #5 ended without an answer (ended badly, exit 3)."]


def test_a_bees_bot_asked_about_an_unknown_issue_says_so_without_a_turn(
    person, bot, hive_tree, tmp_path
):
    claude = bot("claude", "claude")
    marker = tmp_path / "ran"
    source = f"import pathlib\npathlib.Path({str(marker)!r}).write_text('ran')\n"
    hive = hive_tree(
        agent(tmp_path, source),
        **chat_env(person, {"queen": bot("queen", "Queen"), "claude": claude}),
    )
    joined(hive)
    person.say(f"{claude.user_id} why #404?")
    person.wait_for(lambda s: bodies(person, claude))
    assert bodies(person, claude) == ["I know no issue #404."]
    assert not marker.exists()


def spend_day_start():
    from datetime import UTC, datetime

    from hive.rules.spend import day_start

    return day_start(datetime.now(UTC))


def test_the_demo_agents_bot_answers_where_its_work_is_told(person, bot, hive_tree):
    demo = bot("demo", "demo")
    hive = hive_tree("demo", **chat_env(person, {"queen": bot("queen", "Queen"), "demo": demo}))
    add_issue(hive.runtime.db, 3)
    joined(hive)
    person.say(f"{demo.user_id} what did you do on #3?")
    person.wait_for(lambda s: bodies(person, demo))
    (answer,) = bodies(person, demo)
    assert answer.startswith("I am the demo agent") and "`hive logs 3`" in answer
