"""SIGTERM (or SIGKILL) to a real `hive serve` while a bee's bot's turn runs: the drain
stops the turn and lets its question go (a crash: the runner's next start lets it go); a
question asked while the hive is down waits in the room. After the restart each is
answered once, the cut one saying a restart cut its first try (hive.rules.chat_turn)."""

from __future__ import annotations

import signal
import sys
from pathlib import Path

import pytest

from hive.rules.chat_turn import AGAIN
from hive.store import chat as store
from hive.swarm import kill_everything_under, start_serve
from hive.testing import make_repo

from .conftest import add_issue, wait_until

pytestmark = pytest.mark.e2e

EXIT_SECONDS = 60.0
START_SECONDS = 60.0

# The turn: records itself, waits while `<ctl>/hold` exists, then answers with its count.
AGENT = """\
import os, pathlib, sys, time
ctl = pathlib.Path(sys.argv[1])
with (ctl / "turns").open("a") as turns:
    turns.write(f"{os.getpid()}\\n")
while (ctl / "hold").exists():
    time.sleep(0.05)
count = len((ctl / "turns").read_text().splitlines())
print(f"#{os.environ['HIVE_ISSUE']}: answered by turn {count}")
"""


def turns(ctl: Path) -> list[str]:
    path = ctl / "turns"
    return path.read_text().splitlines() if path.exists() else []


@pytest.mark.parametrize(
    ("stop", "next_name"),
    [
        # the drain lets the row go: another runner (a new name) runs it at once
        (signal.SIGTERM, "two"),
        # a crash lets nothing go: the same runner's next start does
        (signal.SIGKILL, "one"),
    ],
    ids=["sigterm", "sigkill"],
)
def test_a_question_cut_mid_turn_and_one_asked_while_down_are_each_answered_once(
    person, bot, db, hive_db_url, tmp_path, stop, next_name
):
    queen, claude = bot("queen", "Queen"), bot("claude", "claude")
    ctl = tmp_path / "ctl"
    ctl.mkdir()
    (tmp_path / "agent.py").write_text(AGENT)
    repo = make_repo(tmp_path / "repo")
    add_issue(db, 12, "Fix the import")
    env = {
        "HIVE_DATABASE_URL": hive_db_url,
        "HIVE_REPO_URL": str(repo),
        "HIVE_WORKDIR": str(tmp_path / "work"),
        "HIVE_ROLE": "queen,runner",
        "HIVE_RUNNER_NAME": "one",
        "HIVE_AGENT": f"command:{sys.executable} {tmp_path / 'agent.py'} {ctl}",
        # the turn is steered through a control directory outside its tree: unsandboxed
        # here (the sandbox's own guarantees are tests/e2e/sandbox)
        "HIVE_AGENT_SANDBOX": "off",
        "HIVE_WORKER_KEY": "sk-chat-drain-0000",
        "HIVE_QUEEN_TICK_SECONDS": "0.5",
        "HIVE_RUNNER_SECONDS": "0.2",
        "HIVE_HTTP_ADDR": "127.0.0.1:0",
        "HIVE_CHAT": "matrix",
        "HIVE_MATRIX_URL": person.server.url,
        "HIVE_MATRIX_ROOM": person.alias,
        "HIVE_MATRIX_TOKEN_QUEEN": queen.access_token,
        "HIVE_MATRIX_TOKEN_CLAUDE": claude.access_token,
        "HIVE_CHAT_GAP_SECONDS": "0",
    }
    logs = tmp_path / "logs"
    serves = []
    try:
        (ctl / "hold").touch()
        first = start_serve("first", env, cwd=tmp_path, log_dir=logs)
        serves.append(first)
        wait_until(lambda: cursor(db), "the bots joined", START_SECONDS)
        person.say(f"{claude.user_id} #12 why did you touch src/app.py?")
        wait_until(lambda: turns(ctl), "the turn started", START_SECONDS)
        first.send(stop)
        code = first.wait(EXIT_SECONDS)
        if stop == signal.SIGTERM:
            assert code == 0 and "Traceback" not in first.log(), first.tail()
        (row,) = store.rows(db)
        assert row["body"] is None and not row["sent"]  # not answered
        assert person.from_(claude.user_id) == []
        person.say(f"{claude.user_id} #12 and asked while you were down?")
        (ctl / "hold").unlink()
        env["HIVE_RUNNER_NAME"] = next_name
        again = start_serve("again", env, cwd=tmp_path, log_dir=logs)
        serves.append(again)
        person.wait_for(lambda s: len(person.from_(claude.user_id)) == 2, 60)
        person.say("after")
        person.wait_for(lambda s: any(m.body == "after" for m in s))
        answers = sorted(m.body for m in person.from_(claude.user_id))
        assert answers == ["#12: answered by turn 3", f"{AGAIN} #12: answered by turn 2"]
        assert len(turns(ctl)) == 3
        wait_until(lambda: all(r["sent"] for r in store.rows(db)), "every row marked sent")
        again.send(signal.SIGTERM)
        assert again.wait(EXIT_SECONDS) == 0, again.tail()
    finally:
        kill_everything_under(tmp_path, serves)


def cursor(db):
    with db.connection() as conn:
        return conn.execute("SELECT next_batch FROM hive.chat_cursor").fetchone()
