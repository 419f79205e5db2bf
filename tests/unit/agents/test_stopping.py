"""The group helpers: never our own group; live members only."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hive.agents.stopping import (
    KILL_LANDS_MS,
    LANE_FREE_MS,
    TURN_STOP_GRACE_MS,
    GroupStop,
    OwnGroupError,
    group_members,
    kill_group,
    process_alive,
    signal_group,
    stop_turn_group,
)

from .conftest import eventually


def test_the_grace_and_the_kill_fit_in_the_lane_free_promise() -> None:
    assert (TURN_STOP_GRACE_MS, KILL_LANDS_MS, LANE_FREE_MS) == (3000, 2000, 5000)
    assert TURN_STOP_GRACE_MS + KILL_LANDS_MS <= LANE_FREE_MS


@pytest.mark.parametrize("pgid", [os.getpgrp(), 0, 1, -5])
def test_a_group_signal_never_reaches_our_own_group(pgid: int) -> None:
    with pytest.raises(OwnGroupError):
        signal_group(pgid, 0)  # signal 0: a broken guard must not kill the test run


def test_group_members_lists_live_processes_and_not_zombies() -> None:
    child = subprocess.Popen(["sleep", "30"], start_new_session=True)
    try:
        assert group_members(child.pid) == [child.pid]
        assert process_alive(child.pid)
        assert signal_group(child.pid, signal.SIGKILL) is True
        # not reaped yet: a zombie, which is no longer a member
        assert _eventually_zombie(child.pid)
        assert group_members(child.pid) == []
        assert not process_alive(child.pid)
    finally:
        child.kill()
        child.wait()
    assert signal_group(child.pid, signal.SIGTERM) is False


def test_a_group_with_no_process_left_is_answered_without_walking_proc(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    child = subprocess.Popen(["sleep", "30"], start_new_session=True)
    child.kill()
    child.wait()  # reaped: the group has no process at all

    def walked(_: Path) -> None:
        raise AssertionError("read /proc for a group signal 0 finds empty")

    monkeypatch.setattr("supervisors.groups.stat_fields", walked)
    assert group_members(child.pid) == []


def _eventually_zombie(pid: int) -> bool:
    def zombie() -> bool:
        stat = Path(f"/proc/{pid}/stat").read_text()
        return stat[stat.rfind(")") + 2] == "Z"

    return eventually(zombie, 5)


def test_without_proc_the_helpers_fall_back_to_signal_zero(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr("supervisors.groups._PROC", tmp_path / "no-proc")
    child = subprocess.Popen(["sleep", "30"], start_new_session=True)
    try:
        assert process_alive(child.pid)
        assert group_members(child.pid) == [child.pid]
    finally:
        child.kill()
        child.wait()
    assert not process_alive(child.pid)
    assert group_members(child.pid) == []


_IGNORES_SIGTERM = (
    "import signal, subprocess, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN);"
    "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']);"
    "print('ready', flush=True); time.sleep(60)"
)


def _group_that_ignores_sigterm() -> subprocess.Popen[str]:
    child = subprocess.Popen(
        [sys.executable, "-c", _IGNORES_SIGTERM],
        start_new_session=True,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None and child.stdout.readline() == "ready\n"
    return child


def test_the_turn_stop_waits_the_card_grace_then_kills_the_whole_group() -> None:
    child = _group_that_ignores_sigterm()
    try:
        began = time.monotonic()
        # KILLED: SIGKILL after the card's grace, and the group empty within KILL_LANDS_MS
        # of it, so the lane is free by LANE_FREE_MS (the bound is the answer's, not a
        # stopwatch's: a loaded machine stretches any wall-clock measure)
        assert stop_turn_group(child.pid) is GroupStop.KILLED
        assert time.monotonic() - began >= TURN_STOP_GRACE_MS / 1000
        assert group_members(child.pid) == []  # its child too
    finally:
        child.kill()
        child.wait()


def test_kill_group_is_the_brutal_stop_of_the_whole_group() -> None:
    child = _group_that_ignores_sigterm()
    try:
        assert kill_group(child.pid) is GroupStop.KILLED  # empty within KILL_LANDS_MS
        assert group_members(child.pid) == []
    finally:
        child.kill()
        child.wait()
