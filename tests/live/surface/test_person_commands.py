"""A person's verbs as a user runs them: `python -m hive` in a subprocess against the real
test database (approve, reject, order cancel, issue close|reopen|edit|block, why, logs)."""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import sys
from typing import IO

import pytest

from hive.rules.states import Outcome
from hive.store import endings, orders, reports, shapes, transcript

from .conftest import World
from .test_commands import hive, one_line_error

pytestmark = pytest.mark.live

LINE_WAIT_SECONDS = 60.0


def issue_with_order(world: World, title: str = "Greet") -> tuple[int, orders.Order]:
    added = hive(world, "issue", "add", "--title", title, "--boundary", "README.md")
    assert added.returncode == 0, added.stderr
    number = int(added.stdout)
    return number, world.queue_order(number)


def next_line(stream: IO[bytes]) -> str:
    """The next line the process writes, waited for up to LINE_WAIT_SECONDS."""
    with selectors.DefaultSelector() as sel:
        sel.register(stream, selectors.EVENT_READ)
        assert sel.select(LINE_WAIT_SECONDS), "no line came"
    return stream.readline().decode()


def follow(world: World, number: int) -> subprocess.Popen[bytes]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("HIVE_")}
    clean.update({"HIVE_DATABASE_URL": world.db_url, "HIVE_WORKDIR": str(world.workdir)})
    return subprocess.Popen(
        [sys.executable, "-m", "hive", "logs", str(number), "--follow"],
        env=clean,
        cwd=world.workdir,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        bufsize=0,  # unbuffered: a line read is never hidden in a buffer from select
    )


def test_approve_refuses_with_one_line_and_exit_4_then_approves_accepted_work(world):
    number, _ = issue_with_order(world)
    refused = hive(world, "approve", str(number))
    assert refused.returncode == 4
    assert one_line_error(refused).startswith(f"hive: #{number} is queued for a runner")
    assert "cannot approve it" in one_line_error(refused)
    world.db.execute(
        "UPDATE hive.queen_dispatch SET finished_at = now(), outcome = 'finished',"
        " outcome_code = 'finished',"
        " review_state = 'accept' WHERE issue = %s",
        (number,),
    )
    done = hive(world, "approve", str(number))
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode().startswith(f"approved #{number} (attempt 1)")
    row = world.db.execute(
        "SELECT approved_by FROM hive.queen_dispatch WHERE issue = %s", (number,)
    ).fetchone()
    assert row is not None and row[0].endswith("(cli)")


def test_reject_sends_finished_work_back_and_unknown_issues_exit_3(world):
    number, order = issue_with_order(world)
    assert orders.claim(world.db, "runner-1") is not None
    fence = orders.Fence(number, order.conversation_id, "runner-1")
    assert endings.end(world.db, endings.OrderEnding(fence, Outcome.FINISHED))
    done = hive(world, "reject", str(number), "--note", "say hello, not hi")
    assert done.returncode == 0, done.stderr
    assert "sent back with your note" in done.stdout.decode()
    row = world.db.execute(
        "SELECT review_state, review_note FROM hive.queen_dispatch WHERE issue = %s", (number,)
    ).fetchone()
    assert row == ("sendback", "say hello, not hi")
    unknown = hive(world, "reject", "99", "--note", "x")
    assert unknown.returncode == 3 and one_line_error(unknown) == "hive: no issue #99"
    empty = hive(world, "reject", str(number), "--note", " ")
    assert empty.returncode == 2 and one_line_error(empty).startswith("hive: note: ")


def test_order_cancel_says_when_the_issue_goes_again(world):
    number, _ = issue_with_order(world)
    done = hive(world, "order", "cancel", str(number))
    assert done.returncode == 0, done.stderr
    said = done.stdout.decode()
    assert said.startswith(f"cancelled #{number} (attempt 1): it was still queued")
    assert "dispatched again in the Queen's next round" in said
    again = hive(world, "order", "cancel", str(number))
    assert again.returncode == 4
    assert "only an order in flight is cancelled" in one_line_error(again)


def test_issue_close_reopen_edit_and_block(world):
    first, _ = issue_with_order(world, "First")
    second = int(hive(world, "issue", "add", "--title", "Second").stdout)
    blocked = hive(world, "issue", "block", str(second), "--by", str(first))
    assert blocked.returncode == 0, blocked.stderr
    assert f"not dispatched until #{first} closes" in blocked.stdout.decode()
    cycle = hive(world, "issue", "block", str(first), "--by", str(second))
    assert cycle.returncode == 4 and "wait forever" in one_line_error(cycle)
    edited = hive(world, "issue", "edit", str(second), "--criterion", "a", "--criterion", "b")
    assert edited.returncode == 0, edited.stderr
    assert edited.stdout.decode().strip() == f"edited #{second}: criteria"
    closed = hive(world, "issue", "close", str(first))
    assert closed.returncode == 0, closed.stderr
    assert "attempt 1 in flight was cancelled" in closed.stdout.decode()
    rows = {r["number"]: r for r in json.loads(hive(world, "issue", "list", "--json").stdout)}
    assert rows[first]["state"] == "closed" and rows[second]["criteria"] == ["a", "b"]
    assert rows[second]["blocked_by"] == [first]
    reopened = hive(world, "issue", "reopen", str(first))
    assert reopened.returncode == 0, reopened.stderr
    nothing = hive(world, "issue", "edit", str(first))
    assert nothing.returncode == 2 and "nothing to change" in one_line_error(nothing)


def test_why_prints_the_sentences_about_the_issue_with_their_times(world):
    number, _ = issue_with_order(world)
    reports.add(world.db, f"dispatched #{number}", "")
    hive(world, "order", "cancel", str(number))
    done = hive(world, "why", str(number))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.decode().splitlines()
    assert lines[0].endswith("attempt 1 ended cancelled: cancelled by hand")
    assert any(line.endswith(f"round: dispatched #{number}") for line in lines)
    assert all(line[:4].isdigit() and line[19:22] == "Z  " for line in lines)


def test_logs_follow_prints_lines_as_they_come_and_exits_0_when_the_order_ends(world):
    number, order = issue_with_order(world)
    transcript.append(world.db, order.conversation_id, number, "stdout", "one")
    proc = follow(world, number)
    try:
        assert proc.stdout is not None
        assert next_line(proc.stdout).startswith("--- attempt 1, ")
        assert next_line(proc.stdout).endswith(" stdout: one\n")
        transcript.append(world.db, order.conversation_id, number, "stdout", "two")
        assert next_line(proc.stdout).endswith(" stdout: two\n")
        assert hive(world, "order", "cancel", str(number)).returncode == 0
        assert proc.wait(timeout=LINE_WAIT_SECONDS) == 0
        assert proc.stderr is not None and proc.stderr.read() == b""
    finally:
        proc.kill()
        proc.wait()


def test_logs_follow_exits_130_quietly_on_ctrl_c(world):
    number, order = issue_with_order(world)
    transcript.append(world.db, order.conversation_id, number, "stdout", "one")
    proc = follow(world, number)
    try:
        assert proc.stdout is not None
        assert next_line(proc.stdout).startswith("--- attempt 1, ")
        assert next_line(proc.stdout).endswith(" stdout: one\n")
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=LINE_WAIT_SECONDS) == 130
        assert proc.stderr is not None and proc.stderr.read() == b""
    finally:
        proc.kill()
        proc.wait()


# what an agent may print to take over a terminal: OSC 52 (write the clipboard), a title
# change, a screen clear, a bell
STEERING = "\x1b]52;c;cm0gLXJmIH4=\x07\x1b]0;pwned\x07\x1b[2J\x1b[H"


def test_logs_shows_an_agents_terminal_escapes_escaped(world):
    number, order = issue_with_order(world)
    transcript.append(world.db, order.conversation_id, number, "stdout", f"a{STEERING}\tb")
    done = hive(world, "logs", str(number))
    assert done.returncode == 0, done.stderr
    assert b"\x1b" not in done.stdout and b"\x07" not in done.stdout
    assert (
        done.stdout.decode()
        .splitlines()[-1]
        .endswith(" stdout: a\\x1b]52;c;cm0gLXJmIH4=\\x07\\x1b]0;pwned\\x07\\x1b[2J\\x1b[H\tb")
    )


def test_logs_follow_shows_an_agents_terminal_escapes_escaped(world):
    number, order = issue_with_order(world)
    transcript.append(world.db, order.conversation_id, number, "stdout", f"x{STEERING}")
    proc = follow(world, number)
    try:
        assert proc.stdout is not None
        assert next_line(proc.stdout).startswith("--- attempt 1, ")
        line = next_line(proc.stdout)
        assert "\x1b" not in line and line.endswith(
            " stdout: x\\x1b]52;c;cm0gLXJmIH4=\\x07" + "\\x1b]0;pwned\\x07\\x1b[2J\\x1b[H\n"
        )
    finally:
        proc.kill()
        proc.wait()


def test_why_shows_a_notes_terminal_escapes_escaped(world):
    number, _ = issue_with_order(world)
    reports.add(world.db, f"dispatched #{number}{STEERING}", "")
    done = hive(world, "why", str(number))
    assert done.returncode == 0, done.stderr
    assert b"\x1b" not in done.stdout and b"\\x1b]52;c;" in done.stdout


def test_logs_into_a_closed_pipe_exits_quietly(world):
    number, order = issue_with_order(world)
    for n in range(400):  # 800 KB: more than a pipe holds
        transcript.append(world.db, order.conversation_id, number, "stdout", f"{n} " + "x" * 2000)
    clean = {k: v for k, v in os.environ.items() if not k.startswith("HIVE_")}
    clean.update({"HIVE_DATABASE_URL": world.db_url, "HIVE_WORKDIR": str(world.workdir)})
    proc = subprocess.Popen(
        [sys.executable, "-m", "hive", "logs", str(number)],
        env=clean,
        cwd=world.workdir,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.readline()  # `| head -1`: one line read, then the pipe is closed
    proc.stdout.close()
    assert proc.wait(timeout=LINE_WAIT_SECONDS) == 0
    assert proc.stderr.read() == b""


def test_issue_show_prints_the_pending_proposal_and_accept_shape_applies_it_once(world):
    added = hive(world, "issue", "add", "--title", "Greet in French", "--body", "free form")
    assert added.returncode == 0, added.stderr
    number = int(added.stdout)
    proposal = ("README.md",), ("file `README.md` contains `Bonjour`",)
    shapes.put(world.db, shapes.Shape(number, shapes.PENDING, *proposal, "no boundary", "n"))
    shown = hive(world, "issue", "show", str(number))
    assert shown.returncode == 0, shown.stderr
    assert "boundary: (none)" in shown.stdout.decode()
    assert "The shaper proposes (for: no boundary):" in shown.stdout.decode()
    assert f"hive issue accept-shape {number}" in shown.stdout.decode()
    accepted = hive(world, "issue", "accept-shape", str(number))
    assert accepted.returncode == 0, accepted.stderr
    assert accepted.stdout.decode().startswith(f"#{number}: the shaper's proposal was accepted by ")
    shown = hive(world, "issue", "show", str(number))
    assert "boundary: README.md" in shown.stdout.decode() and "## Boundary" in shown.stdout.decode()
    again = hive(world, "issue", "accept-shape", str(number))
    assert again.returncode == 4
    assert one_line_error(again).startswith(f"hive: #{number} has no proposal of the shaper")
    assert hive(world, "issue", "show", "999").returncode == 3
