"""A sandboxed turn keeps every guarantee of a plain one: the stop sequence ends all of
it, it never outlives the process that started it (SIGKILLed), the gate holds its agent
until the turn is begun, and a check runs in the sandbox too."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from hive.agents import TurnContext, start_turn
from hive.agents.checks import CheckResult, CheckTurn
from hive.agents.launch import Launch
from hive.agents.review import review_brief, start_review
from hive.agents.sandbox import Kind, Sandbox
from hive.agents.sandbox_choice import install, installed
from hive.rules.turn_stop import LANE_FREE_MS
from hive.testing import git, make_repo

from .test_hostile_turn import AGENT, ESCAPES, Lines, sandbox_of

pytestmark = [pytest.mark.e2e]

KINDS = [Kind.BWRAP_SECCOMP, Kind.LANDLOCK]
GONE_SECONDS = 15.0
STARTED_SECONDS = 30.0
# a stubborn agent: ignores SIGTERM, and leaves two more processes behind
STUBBORN = "trap '' TERM; sleep 600 & sh -c 'trap \"\" TERM; sleep 600' & touch started; wait"


def in_tree(tree: Path) -> list[int]:
    """Every process whose working directory is in `tree`, seen from outside."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cwd = os.readlink(entry / "cwd")
        except OSError:
            continue
        if cwd == str(tree) or cwd.startswith(f"{tree}/"):
            found.append(int(entry.name))
    return found


def wait_for(condition, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    pause = threading.Event()
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        pause.wait(0.05)


def context(tree: Path, sandbox: Sandbox, lines: Lines) -> TurnContext:
    return TurnContext(
        issue=1,
        title="t",
        body="",
        branch="queen-1",
        boundary=(),
        brief="",
        worktree=tree,
        turn_max_seconds=600,
        on_line=lines,
        launch=Launch(sandbox=sandbox),
    )


@pytest.mark.parametrize("kind", KINDS, ids=str)
def test_a_stubborn_sandboxed_turn_is_stopped_whole_within_the_lane_bound(
    kind: Kind, tmp_path: Path
) -> None:
    sandbox = sandbox_of(kind)
    lines = Lines()
    turn = start_turn(f"command:{STUBBORN}", context(tmp_path, sandbox, lines))
    wait_for((tmp_path / "started").exists, STARTED_SECONDS, "the agent to start")
    assert len(in_tree(tmp_path)) >= 3
    began = time.monotonic()
    assert turn.stop("the test stops it"), lines.text()
    assert time.monotonic() - began <= LANE_FREE_MS / 1000 + 1
    wait_for(lambda: not in_tree(tmp_path), GONE_SECONDS, "every process of the turn to end")
    assert "SIGKILL to the process group" in lines.text()


HOLDER = """
import sys, time
from pathlib import Path
from hive.agents import TurnContext, start_turn
from hive.agents.launch import Launch
from hive.agents.review import review_brief, start_review
from hive.agents.sandbox import Kind, Sandbox
from hive.agents.sandbox_choice import bwrap_program
tree = Path(sys.argv[2])
ctx = TurnContext(issue=1, title="t", body="", branch="queen-1", boundary=(), brief="",
    worktree=tree, turn_max_seconds=600,
    launch=Launch(sandbox=Sandbox(kind=Kind(sys.argv[1]), bwrap=bwrap_program())))
turn = start_turn("command:" + sys.argv[3], ctx)
print("started", flush=True)
time.sleep(600)
"""


@pytest.mark.parametrize("kind", KINDS, ids=str)
def test_a_sandboxed_turn_never_outlives_the_process_that_started_it(
    kind: Kind, tmp_path: Path
) -> None:
    sandbox_of(kind)
    tree = tmp_path / "tree"
    tree.mkdir()
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, kind.value, str(tree), STUBBORN],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "started"
        wait_for((tree / "started").exists, STARTED_SECONDS, "the agent to start")
        assert len(in_tree(tree)) >= 3
        holder.send_signal(signal.SIGKILL)
        holder.wait(10)
        wait_for(lambda: not in_tree(tree), GONE_SECONDS, "the orphaned turn to die")
    finally:
        holder.kill()
        holder.wait()


@pytest.mark.parametrize("kind", KINDS, ids=str)
def test_a_sandboxed_turn_stopped_before_it_began_never_ran_its_agent(
    kind: Kind, tmp_path: Path
) -> None:
    sandbox = sandbox_of(kind)
    turn = start_turn("command:touch ran", context(tmp_path, sandbox, Lines()), begin=False)
    assert turn.stop("the row was taken meanwhile")
    assert turn.wait(10)
    assert not (tmp_path / "ran").exists()


@pytest.mark.parametrize("kind", KINDS, ids=str)
def test_a_hostile_check_runs_in_the_installed_sandbox_and_reaches_nothing(
    kind: Kind, hive_secrets: dict[str, str], tmp_path: Path
) -> None:
    sandbox = sandbox_of(kind)
    workdir = Path(hive_secrets["workdir"])
    tree = make_repo(workdir / "scratch-1", {"src/work.txt": "before\n"})
    targets = {
        **hive_secrets,
        "hive_pid": os.getpid(),
        "warden_pid": os.getpid(),
        "other_turn_pids": [],
        "other_key": "no-other-turn-here",
        "outside_file": str(workdir / "escaped.txt"),
        "home_file": str(Path(hive_secrets["home"]) / "escaped.txt"),
        "home_secret": str(Path(hive_secrets["home"]) / ".git-credentials"),
        "boundary_file": "src/work.txt",
    }
    (tree / "targets.json").write_text(
        json.dumps({"targets": targets, "secret": hive_secrets["secret"]})
    )
    before = installed()
    install(sandbox)  # what `hive serve` does at start: checks take it from here
    try:
        command = f"{AGENT} targets.json --short"
        check = CheckTurn("hostile", command, tree, issue=1, timeout_seconds=60)
        ran = check.run()
    finally:
        install(before)
    assert ran.result is CheckResult.PASS, ran.tail
    assert hive_secrets["secret"] not in ran.tail
    assert "ESCAPED" not in ran.tail, ran.tail
    for name in ESCAPES:
        if name not in ("signal_warden", "read_other_turn_key", "read_other_brief"):
            assert f"ESCAPE {name}: refused" in ran.tail, ran.tail
    assert not (workdir / "escaped.txt").exists()


@pytest.mark.parametrize("kind", KINDS, ids=str)
def test_the_demo_agent_commits_and_the_demo_reviewer_judges_inside_the_sandbox(
    kind: Kind, tmp_path: Path
) -> None:
    sandbox = sandbox_of(kind)
    tree = make_repo(tmp_path / "queen-1", {"a.txt": "before\n"})
    lines = Lines()
    ctx = dataclasses.replace(
        context(tree, sandbox, lines), body="write `a.txt`: hello", boundary=("a.txt",)
    )
    turn = start_turn("demo", ctx)
    assert turn.wait(60) and turn.outcome == "finished", lines.text()
    assert git("show", "HEAD:a.txt", cwd=tree) == "hello"
    review = Lines()
    brief = review_brief(1, "t", "", ["a.txt"], ["file `a.txt` contains `hello`"])
    ctx = dataclasses.replace(context(tree, sandbox, review), brief=brief)
    judged = start_review("demo", ctx)
    assert judged.wait(60), review.text()
    assert "HIVE-CRITERION: 1 met" in review.text()
