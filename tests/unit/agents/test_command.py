"""`command:` turns: real shells, real process groups, real signals."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from hive.agents import (
    ENDED_BADLY,
    ENDED_UNEXPECTEDLY,
    FINISHED,
    REASON_BOUND,
    REFUSED,
    STOPPED,
    Ending,
    Turn,
    TurnContext,
    TurnStartError,
    Usage,
    start_turn,
)
from hive.agents.command import GATE_NAME, CommandTurn
from hive.agents.stopping import TURN_STOP_GRACE_MS, group_members
from hive.agents.transcript import LINE_MAX_BYTES

from .conftest import Recorder, alive, eventually

# a deadline for an event (it returns as soon as the event happens), long enough for a
# loaded machine
EVENT_SECONDS = 60.0

Start = Callable[..., Turn]


def test_stdout_lines_reach_the_transcript_in_order(start: Start, recorder: Recorder) -> None:
    turn = start("command:for i in 1 2 3 4 5 6 7 8 9 10; do echo line $i; done")
    assert turn.wait(10)
    assert recorder.texts("stdout") == [f"line {i}" for i in range(1, 11)]


def test_stderr_lines_go_to_the_transcript_as_their_own_kind(
    start: Start, recorder: Recorder
) -> None:
    turn = start("command:echo out; echo err >&2")
    assert turn.wait(10)
    assert recorder.texts("stdout") == ["out"]
    assert recorder.texts("stderr") == ["err"]


@pytest.mark.parametrize(
    ("command", "outcome", "exit_code", "sig"),
    [
        ("exit 0", FINISHED, 0, None),
        ("exit 3", ENDED_BADLY, 3, None),
        ("kill -KILL $$", ENDED_UNEXPECTEDLY, None, signal.SIGKILL),
        ("kill -TERM $$", ENDED_UNEXPECTEDLY, None, signal.SIGTERM),
    ],
)
def test_exit_codes_map_to_outcomes(
    start: Start, command: str, outcome: str, exit_code: int | None, sig: int | None
) -> None:
    turn = start(f"command:{command}")
    assert turn.wait(10)
    assert turn.ending is not None
    assert (turn.outcome, turn.ending.exit_code, turn.ending.signal) == (outcome, exit_code, sig)


def test_brief_arrives_on_stdin_and_in_the_brief_file(start: Start, recorder: Recorder) -> None:
    turn = start('command:cat; echo ---; cat "$HIVE_BRIEF_FILE"; echo "$HIVE_BRIEF_FILE"')
    assert turn.wait(10)
    *lines, brief_file = recorder.texts("stdout")
    assert lines == ["the brief", "line two", "---", "the brief", "line two"]
    assert not Path(brief_file).exists(), "the brief file is removed when the turn ends"
    assert turn.ctx.worktree not in Path(brief_file).parents


def test_environment_holds_the_key_under_its_name_and_no_other_secret(
    start: Start, recorder: Recorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HIVE_DATABASE_URL", "postgresql://hive:secret@db/hive")
    monkeypatch.setenv("HIVE_WORKER_KEY", "sk-runner-key")
    monkeypatch.setenv("HIVE_AGENT", "command:env")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "aws-secret")
    turn = start("command:env | cut -s -d= -f1", key_env="ANTHROPIC_API_KEY", key="sk-turn")
    assert turn.wait(10)
    names = set(recorder.texts("stdout")) - {"PWD"}  # PWD is the shell's own
    assert names == {
        "PATH",
        "HOME",
        "LANG",
        "HIVE_ISSUE",
        "HIVE_BOUNDARY",
        "HIVE_BRANCH",
        "HIVE_BRIEF_FILE",
        "ANTHROPIC_API_KEY",
    }


def test_turn_variables_carry_issue_branch_key_and_newline_separated_boundary(
    start: Start, recorder: Recorder
) -> None:
    turn = start(
        'command:echo "$HIVE_ISSUE|$HIVE_BRANCH|$HIVE_KEY"; printf "%s\\n" "$HIVE_BOUNDARY"',
        key="sk-turn",
    )
    assert turn.wait(10)
    assert recorder.texts("stdout") == ["7|queen-7|sk-turn", "docs", "src/app.py"]


def test_an_agent_that_prints_its_key_does_not_put_it_in_the_transcript(
    start: Start, recorder: Recorder
) -> None:
    turn = start('command:echo "key is $HIVE_KEY"', key="sk-live-0123456789abcdef")
    assert turn.wait(10)
    assert recorder.texts("stdout") == ["key is <key>"]


def test_a_boundary_path_with_a_newline_is_refused(make_ctx: Callable[..., TurnContext]) -> None:
    with pytest.raises(TurnStartError, match="holds a newline"):
        start_turn("command:true", make_ctx(boundary=("docs\nsrc",)))


def test_an_empty_key_sets_no_key_variable(start: Start, recorder: Recorder) -> None:
    turn = start('command:echo "${HIVE_KEY-unset}"', key="")
    assert turn.wait(10)
    assert recorder.texts("stdout") == ["unset"]


def test_the_key_never_shows_in_the_context_repr(make_ctx: Callable[..., TurnContext]) -> None:
    assert "sk-turn" not in repr(make_ctx(key="sk-turn"))


def test_turn_past_its_bound_is_stopped_by_its_own_timer(start: Start) -> None:
    turn = start("command:sleep 30", turn_max_seconds=0.3)
    assert turn.wait(5)
    assert turn.ending is not None
    assert (turn.outcome, turn.ending.stop_reason) == (
        STOPPED,
        f"{REASON_BOUND} (HIVE_TURN_MAX_SECONDS)",
    )
    assert turn.ending.seconds < 5


STUBBORN = """
trap '' TERM
sh -c '
  trap "" TERM
  sh -c "trap \\"\\" TERM; echo grandchild \\$\\$; while :; do sleep 1; done" &
  echo child $$
  while :; do sleep 1; done' &
echo leader $$
while :; do sleep 1; done
"""


def test_stubborn_turn_with_children_is_fully_killed_within_lane_free(
    start: Start, recorder: Recorder
) -> None:
    turn = start("command:" + STUBBORN)
    assert recorder.wait_for(lambda lines: len(lines) >= 3, 10), recorder.lines
    pids = [int(text.split()[1]) for text in recorder.texts("stdout")]
    assert len(pids) == 3 and all(alive(pid) for pid in pids)
    assert turn.pgid == turn.pid and turn.pgid != os.getpgrp()

    began = time.monotonic()
    # True: ended within the grace and the kill's wait, so the lane is free by
    # LANE_FREE_MS (the answer says so; a stopwatch on a loaded machine would not)
    assert turn.stop("drain hand-back") is True
    assert time.monotonic() - began >= TURN_STOP_GRACE_MS / 1000
    assert any("SIGKILL to the process group" in t for t in recorder.texts("hive"))
    assert not [pid for pid in pids if alive(pid)]
    assert turn.pgid is not None and group_members(turn.pgid) == []
    assert turn.ending is not None
    assert (turn.outcome, turn.ending.stop_reason) == (STOPPED, "drain hand-back")
    assert any("SIGKILL" in text for text in recorder.texts("hive"))


def test_a_turn_that_ends_leaves_no_process_behind(start: Start, recorder: Recorder) -> None:
    turn = start(
        "command:mkfifo p; sh -c 'trap \"\" TERM; echo $$ > p; exec sleep 60' &"
        " read pid < p; echo $pid; exit 0"
    )
    assert turn.wait(5)
    assert turn.outcome == FINISHED
    (straggler,) = [int(text) for text in recorder.texts("stdout")]
    assert not alive(straggler)
    assert any("left processes in its group" in text for text in recorder.texts("hive"))


def test_a_turn_stopped_before_begin_never_runs_its_agent(
    make_ctx: Callable[..., TurnContext], worktree: Path
) -> None:
    # the ledger did not land: the process and its group exist, the agent never ran
    turn = start_turn("command:touch ran; sleep 30", make_ctx(), begin=False)
    assert turn.pid is not None
    cmdline = Path(f"/proc/{turn.pid}/cmdline").read_bytes().split(b"\0")
    assert GATE_NAME.encode() in cmdline  # the gate waits; the command has not replaced it
    assert turn.stop("no ledger")
    assert turn.ending is not None and turn.ending.stop_reason == "no ledger"
    assert not (worktree / "ran").exists()


def test_a_turn_that_exits_on_sigterm_is_stopped_without_waiting_for_the_grace(
    start: Start,
) -> None:
    turn = start("command:sleep 30")
    assert turn.stop("heartbeat lost")
    # the grace was not waited out: no SIGKILL was needed
    assert turn.ending is not None and turn.ending.signal == signal.SIGTERM
    assert turn.ending is not None and turn.ending.stop_reason == "heartbeat lost"


def test_request_stop_returns_at_once_and_on_end_reports_the_stop(
    make_ctx: Callable[..., TurnContext], recorder: Recorder
) -> None:
    ended = threading.Event()
    endings: list[Ending] = []

    def on_end(ending: Ending) -> None:
        endings.append(ending)
        ended.set()

    stubborn = "command:trap '' TERM; echo ready; while :; do sleep 1; done"
    turn = start_turn(stubborn, make_ctx(on_end=on_end, stop_grace_ms=TURN_STOP_GRACE_MS))
    # the trap is set before the SIGTERM comes, else the SIGTERM alone would end it
    assert recorder.wait_for_text("ready", EVENT_SECONDS)
    turn.request_stop("heartbeat lost")
    # it returned before the turn ended: the turn ignores SIGTERM, so only the SIGKILL
    # after the grace ends it (a clock read here would measure the machine's load)
    assert not ended.is_set()
    assert ended.wait(EVENT_SECONDS)
    assert [e.stop_reason for e in endings] == ["heartbeat lost"]


def test_stopping_twice_at_once_and_again_later_is_safe(start: Start) -> None:
    turn = start("command:trap '' TERM; while :; do sleep 1; done", stop_grace_ms=100)
    answers: list[bool] = []
    stoppers = [
        threading.Thread(target=lambda r=reason: answers.append(turn.stop(r)))
        for reason in ("first", "second")
    ]
    for stopper in stoppers:
        stopper.start()
    for stopper in stoppers:
        stopper.join(10)
    assert answers == [True, True]  # both: ended within the grace and the kill's wait
    assert turn.stop("third") is True
    assert turn.ending is not None and turn.ending.stop_reason in ("first", "second")


def test_stopping_a_turn_that_already_ended_keeps_its_outcome(start: Start) -> None:
    turn = start("command:exit 0")
    assert turn.wait(10)
    assert turn.stop("too late") is True
    assert turn.outcome == FINISHED


def test_a_stop_after_the_agent_exited_keeps_its_outcome(
    make_ctx: Callable[..., TurnContext],
) -> None:
    # the agent runs, its transcript held back: the turn is open after its process is gone
    turn = start_turn("command:exit 0", make_ctx(), begin=False)
    turn._open_gate()  # type: ignore[attr-defined]
    assert turn.pid is not None
    pid = turn.pid
    assert eventually(lambda: not Path(f"/proc/{pid}").exists(), EVENT_SECONDS), "reaped"
    assert turn.stop("too late") is True
    assert turn.ending is not None
    assert (turn.outcome, turn.ending.stop_reason) == (FINISHED, None)


def test_a_refusal_line_makes_the_outcome_refused(start: Start) -> None:
    turn = start("command:echo 'HIVE-REFUSAL: rate-limit'; echo 'HIVE-REFUSAL: quota'; exit 1")
    assert turn.wait(10)
    assert turn.ending is not None
    assert (turn.outcome, turn.ending.refusal, turn.ending.exit_code) == (REFUSED, "quota", 1)


def test_a_malformed_refusal_is_noted_and_not_a_refusal(start: Start, recorder: Recorder) -> None:
    turn = start("command:echo 'HIVE-REFUSAL: too tired'; exit 2")
    assert turn.wait(10)
    assert turn.outcome == ENDED_BADLY
    assert any("'too tired' is not a refusal kind" in text for text in recorder.texts("hive"))


def test_a_providers_own_refusal_word_is_reported_for_the_keys_rule(start: Start) -> None:
    turn = start("command:echo 'HIVE-REFUSAL: 429'; exit 1")
    assert turn.wait(10)
    assert turn.ending is not None
    assert (turn.outcome, turn.ending.refusal) == (REFUSED, "429")


def test_protocol_lines_count_on_stdout_only(start: Start) -> None:
    turn = start("command:echo 'HIVE-REFUSAL: quota' >&2; exit 1")
    assert turn.wait(10)
    assert turn.ending is not None
    assert (turn.outcome, turn.ending.refusal) == (ENDED_BADLY, None)


def test_usage_lines_add_up(start: Start) -> None:
    turn = start(
        "command:echo 'HIVE-USAGE: provider=anthropic model=m1 input=10 output=2';"
        "echo 'HIVE-USAGE: input=5 output=1'"
    )
    assert turn.wait(10)
    assert turn.ending is not None
    assert turn.ending.usage == Usage("anthropic", "m1", 15, 3)


def test_a_long_line_is_cut_and_the_next_line_is_whole(start: Start, recorder: Recorder) -> None:
    turn = start("command:head -c 10000 /dev/zero | tr '\\0' x; echo; echo after")
    assert turn.wait(10)
    long, after = recorder.texts("stdout")
    assert long == "x" * LINE_MAX_BYTES + " [cut]"
    assert after == "after"


def test_the_transcript_waits_for_begin(make_ctx: Callable[..., TurnContext]) -> None:
    recorder = Recorder()
    turn = start_turn("command:echo hello", make_ctx(on_line=recorder), begin=False)
    try:
        assert not turn.wait(0.3), "the turn cannot end before begin()"
        assert recorder.lines == []
        turn.begin()
        assert turn.wait(10)
        assert recorder.texts("stdout") == ["hello"]
    finally:
        turn.stop("the test is over")


def test_on_end_is_called_once_with_the_ending(make_ctx: Callable[..., TurnContext]) -> None:
    endings: list[Ending] = []
    turn = start_turn("command:exit 4", make_ctx(on_end=endings.append))
    assert turn.wait(10)
    assert endings == [turn.ending]


def test_an_on_line_that_raises_does_not_stall_the_turn_or_flood_the_log(
    make_ctx: Callable[..., TurnContext], caplog: pytest.LogCaptureFixture
) -> None:
    stdout_lines = []
    lost = []

    def broken(kind: str, text: str) -> None:
        lost.append(kind)
        if kind == "stdout":
            stdout_lines.append(text)
        raise RuntimeError("store is down")

    # more than a pipe buffer: the agent would block if the reader stopped draining
    turn = start_turn("command:yes | head -n 40000", make_ctx(on_line=broken))
    # a stall never ends; 40,000 raising lines take seconds on a loaded machine
    assert turn.wait(EVENT_SECONDS)
    assert turn.outcome == FINISHED
    assert len(stdout_lines) == 40000
    # every line was lost, the hive's own notes too (under load there may be one more:
    # the group's leftovers killed after the agent's exit)
    assert [r.getMessage() for r in caplog.records if r.name == "hive.agents"] == [
        "on_line raised; the line is lost",
        f"on_line raised for {len(lost)} lines of this turn",
    ]


@pytest.mark.parametrize(
    ("spec", "changes", "message"),
    [
        ("command:true", {"worktree": Path("/nonexistent/wt")}, "is not a directory"),
        ("command:true", {"key_env": "PATH"}, "HIVE_KEY_ENV=PATH would overwrite"),
        ("command:  ", {}, "needs a shell command"),
        ("gemini", {}, "HIVE_AGENT='gemini' is not an agent"),
    ],
)
def test_a_turn_that_cannot_start_says_why_in_one_line(
    make_ctx: Callable[..., TurnContext], spec: str, changes: dict[str, object], message: str
) -> None:
    with pytest.raises(TurnStartError, match=message) as raised:
        start_turn(spec, make_ctx(**changes))
    assert "\n" not in str(raised.value)


def test_a_stuck_on_line_does_not_stretch_the_stop_past_lane_free(
    make_ctx: Callable[..., TurnContext],
) -> None:
    entered, release, returned = threading.Event(), threading.Event(), threading.Event()

    def stuck(kind: str, text: str) -> None:
        if kind == "stdout":
            entered.set()
            release.wait(30)
            returned.set()

    command = "command:echo hi; trap '' TERM; while :; do sleep 1; done"
    turn = start_turn(command, make_ctx(on_line=stuck, stop_grace_ms=100))
    try:
        assert entered.wait(10)
        turn.stop("drain hand-back")
        assert not returned.is_set(), "the stop waited for the stuck on_line"
        assert turn.pgid is not None and group_members(turn.pgid) == []
    finally:
        release.set()
    assert turn.wait(5) and turn.outcome == STOPPED


def test_a_slow_transcript_loses_no_line_after_the_agent_exits(
    make_ctx: Callable[..., TurnContext],
) -> None:
    got: list[str] = []

    def slow(kind: str, text: str) -> None:
        if kind == "stdout":
            time.sleep(0.0004)  # a store that takes its time: the pipe drains slower
            got.append(text)

    # the agent is gone long before its 5000 lines are through the slow transcript
    turn = start_turn("command:seq 5000", make_ctx(on_line=slow))
    assert turn.wait(60)
    assert turn.outcome == FINISHED
    assert len(got) == 5000 and got[-1] == "5000"


@pytest.mark.parametrize("program", ["no-such-agent-on-the-path", "/nonexistent/bin/agent"])
def test_an_agent_program_that_is_not_there_is_a_start_error(
    make_ctx: Callable[..., TurnContext], program: str
) -> None:
    with pytest.raises(TurnStartError, match=f"the agent could not start: no program {program}"):
        CommandTurn(make_ctx(), "", argv=[program, "--version"])


# A hive process with one turn under way, whose agent names its brief file, then waits.
_TURN_OWNER = """
import sys, threading, time
from pathlib import Path
from hive.agents import TurnContext, start_turn
ctx = TurnContext(issue=7, title="t", body="", branch="queen-7", boundary=("docs",),
                  brief="the brief", worktree=Path(sys.argv[1]), turn_max_seconds=600,
                  on_line=lambda kind, text: None, stopping=threading.Event())
turn = start_turn('command:echo "$HIVE_BRIEF_FILE" > brief-is; exec sleep 600', ctx)
time.sleep(600)
"""


def test_a_hive_killed_mid_turn_leaves_no_brief_behind(worktree: Path) -> None:
    root = Path(__file__).resolve().parents[3]
    named = worktree / "brief-is"
    owner = subprocess.Popen(
        [sys.executable, "-c", _TURN_OWNER, str(worktree)],
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)},
        start_new_session=True,
    )
    try:
        # one write of echo's: once the file holds anything, it holds the whole line
        assert eventually(lambda: named.exists() and named.read_text() != "", EVENT_SECONDS)
        brief = Path(named.read_text().strip())
        assert brief.read_text() == "the brief"
        owner.kill()  # as the OOM killer would: no cleanup of its own runs
        assert eventually(lambda: not brief.parent.exists(), EVENT_SECONDS)
    finally:
        if owner.poll() is None:
            owner.kill()
        owner.wait()
