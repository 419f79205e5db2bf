"""The group helpers: never our own group; live members only."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest

from hive.agents.stopping import (
    KILL_LANDS_MS,
    LANE_FREE_MS,
    TURN_STOP_GRACE_MS,
    OwnGroupError,
    group_members,
    process_alive,
    signal_group,
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


def _eventually_zombie(pid: int) -> bool:
    def zombie() -> bool:
        stat = Path(f"/proc/{pid}/stat").read_text()
        return stat[stat.rfind(")") + 2] == "Z"

    return eventually(zombie, 5)


def test_without_proc_the_helpers_fall_back_to_signal_zero(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr("hive.agents.stopping._PROC", tmp_path / "no-proc")
    child = subprocess.Popen(["sleep", "30"], start_new_session=True)
    try:
        assert process_alive(child.pid)
        assert group_members(child.pid) == [child.pid]
    finally:
        child.kill()
        child.wait()
    assert not process_alive(child.pid)
    assert group_members(child.pid) == []
