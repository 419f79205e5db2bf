"""The one group stop: SIGTERM, the grace, SIGKILL to the whole group; a grace of 0 is a
brutal kill; never the caller's own group. And when a process is on its way out."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from supervisors import groups
from supervisors.groups import (
    GroupStop,
    OwnGroupError,
    group_empty,
    group_members,
    process_exiting,
    signal_group,
    stop_group,
)

from .helpers import DEADLINE_SECONDS

# prints its child's pid, then both sleep; SIGTERM ends it unless it ignores it
_PARENT = (
    "import signal, subprocess, sys, time;"
    "{ignore}"
    "p = subprocess.Popen([sys.executable, '-c', 'import signal, time;"
    "{ignore} time.sleep(60)']);"
    "print(p.pid, flush=True); time.sleep(60)"
)
_IGNORE = "signal.signal(signal.SIGTERM, signal.SIG_IGN);"
_MARK_TERM = (
    "import pathlib, signal, sys, time;"
    "signal.signal(signal.SIGTERM, lambda *a: (pathlib.Path(sys.argv[1]).touch(), sys.exit(0)));"
    "print('ready', flush=True); time.sleep(60)"
)


def _start(code: str, *args: str) -> tuple[subprocess.Popen[str], str]:
    child = subprocess.Popen(
        [sys.executable, "-c", code, *args],
        start_new_session=True,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    return child, child.stdout.readline().strip()


def _reap(child: subprocess.Popen[str]) -> None:
    if child.poll() is None and group_members(child.pid):
        signal_group(child.pid, 9)
    child.wait(DEADLINE_SECONDS)


def test_a_group_that_heeds_sigterm_ends_within_the_grace() -> None:
    child, _grandchild = _start(_PARENT.format(ignore=""))
    try:
        # ENDED: gone within the grace, without SIGKILL
        assert stop_group(child.pid, grace_seconds=5, kill_lands_seconds=2) is GroupStop.ENDED
        assert group_members(child.pid) == []
    finally:
        _reap(child)
    assert child.returncode == -15


def test_a_group_that_ignores_sigterm_is_killed_whole_after_the_grace() -> None:
    child, _grandchild = _start(_PARENT.format(ignore=_IGNORE))
    try:
        began = time.monotonic()
        stopped = stop_group(child.pid, grace_seconds=0.3, kill_lands_seconds=2)
        took = time.monotonic() - began
        # KILLED: SIGKILL after the whole grace, and the group gone within the kill's wait
        assert stopped is GroupStop.KILLED
        assert took >= 0.3
        assert group_members(child.pid) == []  # the grandchild too
    finally:
        _reap(child)
    assert child.returncode == -9


def test_a_grace_of_zero_kills_without_asking(tmp_path: Path) -> None:
    mark = tmp_path / "asked"
    child, ready = _start(_MARK_TERM, str(mark))
    assert ready == "ready"
    try:
        assert stop_group(child.pid, grace_seconds=0, kill_lands_seconds=2) is GroupStop.KILLED
    finally:
        _reap(child)
    assert child.returncode == -9 and not mark.exists()


def test_the_owner_may_say_when_its_work_ended_and_how_to_signal() -> None:
    sent: list[int] = []
    stopped = stop_group(
        12345678,  # never signalled: the owner's `send` does it
        grace_seconds=0.05,
        kill_lands_seconds=0.05,
        ended=lambda timeout: False,
        send=sent.append,
    )
    assert stopped is GroupStop.OUTLIVED
    assert sent == [15, 9]


def test_a_group_already_gone_is_ended_without_a_signal() -> None:
    child = subprocess.Popen(["true"], start_new_session=True)
    child.wait(DEADLINE_SECONDS)
    sent: list[int] = []
    assert group_empty(child.pid, 0)
    stopped = stop_group(child.pid, grace_seconds=0, kill_lands_seconds=1, send=sent.append)
    assert stopped is GroupStop.ENDED and sent == []


@pytest.mark.parametrize("pgid", [os.getpgrp(), 0, 1])
def test_the_stop_never_reaches_our_own_group(pgid: int) -> None:
    with pytest.raises(OwnGroupError):
        stop_group(pgid, grace_seconds=0.01, kill_lands_seconds=0.01, ended=lambda t: False)


def test_a_live_process_is_not_exiting_a_zombie_and_a_gone_one_are() -> None:
    child = subprocess.Popen(["sleep", "600"])
    try:
        assert not process_exiting(child.pid)
        assert not process_exiting(os.getpid())  # several threads, none exiting
        child.kill()
        deadline = time.monotonic() + DEADLINE_SECONDS
        while not process_exiting(child.pid) and time.monotonic() < deadline:
            time.sleep(0.01)  # killed: a zombie until reaped
        assert process_exiting(child.pid)
    finally:
        child.kill()
        child.wait()
    assert process_exiting(child.pid)  # reaped: gone


def _fake_proc(tmp_path: Path, flags: int | None = None, pending: str | None = None) -> int:
    """A /proc with this process's one thread, as the kernel wrote it, but for its stat
    flags (field 9) or its pending signals; the pid it holds."""
    pid = os.getpid()
    thread = tmp_path / str(pid) / "task" / str(pid)
    thread.mkdir(parents=True)
    real = Path(f"/proc/{pid}/task/{pid}")
    stat = (real / "stat").read_text()
    head, tail = stat[: stat.rfind(")") + 2], stat[stat.rfind(")") + 2 :].split()
    if flags is not None:
        tail[6] = str(int(tail[6]) | flags)
    (thread / "stat").write_text(head + " ".join(tail) + "\n")
    shutil.copy(real / "status", thread / "status")
    if pending is not None:
        lines = (thread / "status").read_text().splitlines()
        lines = [f"SigPnd:\t{pending}" if line.startswith("SigPnd:") else line for line in lines]
        (thread / "status").write_text("\n".join(lines) + "\n")
    return pid


@pytest.mark.parametrize(
    ("flags", "pending", "exiting"),
    [
        (None, None, False),
        (0x4, None, True),  # PF_EXITING: the thread is in do_exit
        (0x40, None, False),  # PF_FORKNOEXEC: another flag
        (None, f"{1 << (signal.SIGKILL - 1):016x}", True),  # SIGKILL is pending
        (None, f"{1 << (signal.SIGTERM - 1):016x}", False),  # a mere SIGTERM
    ],
)
def test_a_killed_process_still_alive_by_its_state_is_exiting(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    flags: int | None,
    pending: str | None,
    exiting: bool,
) -> None:
    # the window a sweep met: SIGKILLed, the thread that started its groups gone, its
    # leader thread not yet a zombie (too short to catch in a real process)
    pid = _fake_proc(tmp_path, flags, pending)
    monkeypatch.setattr(groups, "_PROC", tmp_path)
    assert process_exiting(pid) is exiting
