"""The shared cut-and-start: the turn's stream waits for the caller's ledger, a ledger
that did not land stops the turn, and a branch an earlier attempt left is continued."""

from __future__ import annotations

import threading

from hive.actors.bee.start import NO_LEDGER, cut_and_start, plan_of
from hive.agents import Ending
from hive.git.worktrees import remove_worktree
from tests.live.runtime.conftest import AGENT


def plan(rt, issue: int = 1):
    return plan_of(
        rt.bee.start,
        issue=issue,
        title="t",
        body="",
        base="main",
        base_sha=rt.checkout.base_sha,
        boundary=("src/app.py",),
        brief="brief",
        key="",
    )


def test_no_line_reaches_the_transcript_before_the_ledger_is_written(make_runtime):
    rt = make_runtime(AGENT=AGENT + "finish")
    line_seen = threading.Event()
    seen_in_ledger: list[bool] = []
    ended = threading.Event()

    def ledger() -> bool:
        # the agent speaks at once: had its stream begun, the line would come now
        seen_in_ledger.append(line_seen.wait(0.5))
        return True

    started = cut_and_start(
        rt.checkout,
        plan(rt),
        ledger,
        on_line=lambda kind, text: line_seen.set(),
        on_end=lambda ending: ended.set(),
    )
    assert started is not None
    assert seen_in_ledger == [False]
    assert line_seen.wait(5) and ended.wait(5)


def test_a_ledger_that_did_not_land_stops_the_turn(make_runtime):
    rt = make_runtime(AGENT=AGENT + "until_stopped")
    endings: list[Ending] = []
    done = threading.Event()

    def on_end(ending: Ending) -> None:
        endings.append(ending)
        done.set()

    started = cut_and_start(
        rt.checkout,
        plan(rt),
        lambda: False,
        on_line=lambda k, t: None,
        on_end=on_end,
    )
    assert started is None
    assert done.wait(10)
    assert endings[0].outcome == "stopped" and endings[0].stop_reason == NO_LEDGER


def test_a_new_attempt_continues_the_branch(make_runtime):
    rt = make_runtime(AGENT=AGENT + "finish")
    first = cut_and_start(rt.checkout, plan(rt, 2), lambda: True, on_line=lambda k, t: None)
    assert first is not None and not first.cut.continued
    assert first.turn.wait(10)
    remove_worktree(rt.checkout.repo, first.cut.path)
    again = cut_and_start(rt.checkout, plan(rt, 2), lambda: True, on_line=lambda k, t: None)
    assert again is not None and again.cut.continued
    assert again.turn.wait(10)
