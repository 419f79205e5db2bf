"""A process's groups never outlive it: the warden kills them at its death (SIGKILL
included), the leader's parent-death signal kills the leader even without the warden,
and a later process on the same records kills what both left."""

from __future__ import annotations

import fcntl
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from supervisors import warden as warden_module
from supervisors.groups import group_members, process_alive, process_exiting, signal_group
from supervisors.procstat import start_time
from supervisors.warden import LOCK_NAME, Warden, still_ours, sweep
from supervisors.work import WatchedProcess

from .helpers import DEADLINE_SECONDS

# How long a test waits for a dead owner's groups to go: an event's deadline, not the
# issue's 2 s bound (a loaded machine may schedule the warden late; `hive bench
# recovery` measures the time)
DIES_WITHIN_SECONDS = 60.0

# An owner: starts a group of two sleeps (a leader and its child) as a WatchedProcess,
# optionally records under argv[1], prints "<leader> <child> <warden>", and waits.
_OWNER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from supervisors.warden import warden
    from supervisors.work import WatchedProcess
    if len(sys.argv) > 1:
        warden().keep_records(Path(sys.argv[1]))
    w = WatchedProcess.start(["/bin/sh", "-c", "sleep 600 & echo $!; wait"],
                             stdout=__import__("subprocess").PIPE)
    child = w.popen.stdout.readline().decode().strip()
    print(w.pgid, child, warden().pid, flush=True)
    time.sleep(600)
    """
)


def _gone(pids: list[int], seconds: float) -> float | None:
    """Seconds until none of `pids` is alive, None if some outlive `seconds`."""
    start = time.monotonic()
    while time.monotonic() - start < seconds:
        if not any(process_alive(p) for p in pids):
            return time.monotonic() - start
        time.sleep(0.01)
    return None


@pytest.fixture
def owner(tmp_path: Path) -> Iterator[list[subprocess.Popen[str]]]:
    started: list[subprocess.Popen[str]] = []
    yield started
    for popen in started:
        if popen.poll() is None:
            popen.kill()
        popen.wait()


def _spawn(owner: list[subprocess.Popen[str]], script: str, *args: str) -> list[int]:
    """Run `script` as an owner process of this package; the numbers of its first line."""
    root = Path(__file__).resolve().parents[3]
    popen = subprocess.Popen(
        [sys.executable, "-c", script, *args],
        stdout=subprocess.PIPE,
        text=True,
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)},
        start_new_session=True,
    )
    owner.append(popen)
    assert popen.stdout is not None
    return [int(w) for w in popen.stdout.readline().split()]


def _start_owner(owner: list[subprocess.Popen[str]], *args: str) -> tuple[int, int, int, int]:
    leader, child, warden_pid = _spawn(owner, _OWNER, *args)
    return owner[-1].pid, leader, child, warden_pid


def test_an_owner_killed_by_sigkill_leaves_no_process_of_its_groups(
    owner: list[subprocess.Popen[str]],
) -> None:
    pid, leader, child, _warden = _start_owner(owner)
    assert group_members(leader) and process_alive(child)
    os.kill(pid, signal.SIGKILL)
    took = _gone([leader, child], DIES_WITHIN_SECONDS)
    assert took is not None, "a process of the dead owner's group still runs"


def test_without_its_warden_the_leader_still_dies_with_its_owner_and_a_sweep_kills_the_rest(
    owner: list[subprocess.Popen[str]], tmp_path: Path
) -> None:
    records = tmp_path / "groups"
    pid, leader, child, warden_pid = _start_owner(owner, str(records))
    record = records / str(pid) / str(leader)
    deadline = time.monotonic() + DEADLINE_SECONDS
    while not record.exists() and time.monotonic() < deadline:
        time.sleep(0.01)  # the warden writes it from its own process
    assert record.exists(), "the warden records the group"
    os.kill(warden_pid, signal.SIGKILL)
    assert _gone([warden_pid], DEADLINE_SECONDS) is not None
    os.kill(pid, signal.SIGKILL)
    # the parent-death signal reaches the leader; the child is out of its reach
    assert _gone([leader], DIES_WITHIN_SECONDS) is not None
    assert process_alive(child)
    try:
        assert sweep(records) == [leader]
        assert _gone([child], DEADLINE_SECONDS) is not None
        assert not records.exists() or list(records.iterdir()) == []
    finally:
        if process_alive(child):
            os.kill(child, signal.SIGKILL)


def test_a_sweep_leaves_the_groups_of_a_live_owner(tmp_path: Path) -> None:
    records = tmp_path / "groups" / str(os.getpid())  # a live owner: this process
    records.mkdir(parents=True)
    sleeper = subprocess.Popen(["sleep", "600"], start_new_session=True)
    try:
        (records / str(sleeper.pid)).write_text(start_time(sleeper.pid) or "")
        with (records / LOCK_NAME).open("ab") as held:
            fcntl.flock(held, fcntl.LOCK_EX)  # another open file: as another process
            assert sweep(tmp_path / "groups") == []
            assert sleeper.poll() is None
        assert sweep(tmp_path / "groups") == [sleeper.pid]
        assert sleeper.wait(DEADLINE_SECONDS) == -signal.SIGKILL
    finally:
        if sleeper.poll() is None:
            sleeper.kill()
        sleeper.wait()


def test_a_sweep_waits_for_the_lock_of_an_owner_that_is_still_exiting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the owner was killed: its leader thread is a zombie while its last threads still
    # hold the lock; the lock goes as the sweep looks at the owner
    exiting = subprocess.Popen(["sleep", "600"])
    sleeper = subprocess.Popen(["sleep", "600"], start_new_session=True)
    try:
        exiting.kill()
        deadline = time.monotonic() + DEADLINE_SECONDS
        while process_alive(exiting.pid) and time.monotonic() < deadline:
            time.sleep(0.01)  # a zombie: killed, not yet reaped
        assert not process_alive(exiting.pid)
        records = tmp_path / "groups" / str(exiting.pid)
        records.mkdir(parents=True)
        (records / str(sleeper.pid)).write_text(start_time(sleeper.pid) or "")
        held = (records / LOCK_NAME).open("ab")
        fcntl.flock(held, fcntl.LOCK_EX)  # another open file: as the exiting owner's
        looked: list[int] = []

        def last_thread_exits(pid: int) -> bool:
            looked.append(pid)
            held.close()
            return process_exiting(pid)

        monkeypatch.setattr(warden_module, "process_exiting", last_thread_exits)
        assert sweep(tmp_path / "groups") == [sleeper.pid]
        assert looked == [exiting.pid]
        assert sleeper.wait(DEADLINE_SECONDS) == -signal.SIGKILL
    finally:
        for popen in (exiting, sleeper):
            if popen.poll() is None:
                popen.kill()
            popen.wait()


def test_a_record_whose_group_number_now_names_another_process_is_not_killed(
    tmp_path: Path,
) -> None:
    sleeper = subprocess.Popen(["sleep", "600"], start_new_session=True)
    try:
        started = start_time(sleeper.pid)
        assert started is not None and still_ours(sleeper.pid, started)
        assert not still_ours(sleeper.pid, str(int(started) + 1))  # the number reused
        records = tmp_path / "groups" / "4242"
        records.mkdir(parents=True)
        (records / str(sleeper.pid)).write_text(str(int(started) + 1))
        assert sweep(tmp_path / "groups") == []
        assert sleeper.poll() is None
    finally:
        sleeper.kill()
        sleeper.wait()


def test_closing_the_warden_kills_what_it_holds_and_not_what_it_released() -> None:
    warden = Warden()
    held = subprocess.Popen(["sleep", "600"], start_new_session=True)
    released = subprocess.Popen(["sleep", "600"], start_new_session=True)
    try:
        warden.watch(held.pid)
        warden.watch(released.pid)
        warden.release(released.pid)
        warden.close()
        assert held.wait(DEADLINE_SECONDS) == -signal.SIGKILL
        assert released.poll() is None
    finally:
        for popen in (held, released):
            if popen.poll() is None:
                signal_group(popen.pid, signal.SIGKILL)
            popen.wait()


def test_a_warden_that_died_is_replaced_and_told_every_group_held(tmp_path: Path) -> None:
    warden = Warden()
    held = subprocess.Popen(["sleep", "600"], start_new_session=True)
    scratch = tmp_path / "brief"
    scratch.mkdir()
    try:
        warden.watch(held.pid)
        warden.remove_at_death(scratch)
        first = warden.pid
        assert first is not None
        os.kill(first, signal.SIGKILL)
        assert _gone([first], DEADLINE_SECONDS) is not None
        other = subprocess.Popen(["sleep", "600"], start_new_session=True)
        warden.watch(other.pid)  # finds its warden gone and starts another
        assert warden.pid not in (None, first)
        warden.close()
        assert held.wait(DEADLINE_SECONDS) == -signal.SIGKILL
        assert other.wait(DEADLINE_SECONDS) == -signal.SIGKILL
        assert not scratch.exists()  # close waited for the warden: its removals are done
    finally:
        for popen in (held,):
            if popen.poll() is None:
                popen.kill()
            popen.wait()


def test_a_watched_group_is_released_once_its_leader_exited_and_it_is_empty() -> None:
    from supervisors import warden as module

    quick = WatchedProcess.start(["true"])
    assert quick.ended(DEADLINE_SECONDS)
    deadline = time.monotonic() + DEADLINE_SECONDS
    while quick.pgid in module.warden()._held and time.monotonic() < deadline:
        time.sleep(0.01)
    assert quick.pgid not in module.warden()._held


def test_a_group_whose_fence_is_not_renewed_is_killed_while_its_owner_lives() -> None:
    """An owner that cannot renew (stopped, cut off from the store) loses its group on
    time: the warden kills it at the fence, the owner and its other groups live on."""
    warden = Warden()
    fenced = subprocess.Popen(["sleep", "600"], start_new_session=True)
    free = subprocess.Popen(["sleep", "600"], start_new_session=True)
    try:
        warden.watch(fenced.pid)
        warden.watch(free.pid)
        warden.fence(fenced.pid, 0.2)
        assert fenced.wait(DEADLINE_SECONDS) == -signal.SIGKILL
        assert free.poll() is None
        assert warden.pid is not None and process_alive(warden.pid)
    finally:
        warden.close()
        for popen in (fenced, free):
            if popen.poll() is None:
                popen.kill()
            popen.wait()


def test_a_fence_renewed_in_time_holds_past_its_length() -> None:
    warden = Warden()
    held = subprocess.Popen(["sleep", "600"], start_new_session=True)
    try:
        warden.watch(held.pid)
        fence_seconds = 3.0
        until = time.monotonic() + fence_seconds * 1.5
        while time.monotonic() < until:
            warden.fence(held.pid, fence_seconds)
            time.sleep(0.2)  # the owner's heartbeat
        assert held.poll() is None
        warden.fence(held.pid, 0.1)  # then it stops renewing
        assert held.wait(DEADLINE_SECONDS) == -signal.SIGKILL
    finally:
        warden.close()
        if held.poll() is None:
            held.kill()
        held.wait()


def test_a_record_is_written_whole_or_not_at_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a warden killed mid-write: the record of group 123 must not exist half written
    # (an empty start time is no group a sweep may kill: it would run on)
    from supervisors import warden_main

    def killed_mid_write(self: Path, text: str, *args: object, **kwargs: object) -> int:
        with self.open("w") as half:
            half.write(text[:0])
        raise OSError("the warden died")

    held: dict[int, str] = {}
    monkeypatch.setattr(Path, "write_text", killed_mid_write)
    warden_main._obey("+ 123 4567", held, {}, tmp_path, set())
    monkeypatch.undo()
    assert not (tmp_path / "123").exists()
    warden_main._obey("+ 124 4568", held, {}, tmp_path, set())
    assert (tmp_path / "124").read_text() == "4568"
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.isdigit()) == ["124"]
    # a directory taken over later writes every held record whole too
    moved = tmp_path / "moved"
    moved.mkdir()
    assert warden_main._obey(f"d {moved}", held, {}, tmp_path, set()) == moved
    assert {p.name: p.read_text() for p in moved.iterdir()} == {"123": "4567", "124": "4568"}


# An owner: gives its warden two scratch directories, takes one back, says so, and waits.
_SCRATCH_OWNER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from supervisors.warden import warden
    kept, taken_back = Path(sys.argv[1]), Path(sys.argv[2])
    warden().remove_at_death(kept)
    warden().remove_at_death(taken_back)
    warden().forget(taken_back)
    print(warden().pid, flush=True)
    time.sleep(600)
    """
)


def test_the_warden_removes_its_owners_scratch_directories_at_its_death(
    owner: list[subprocess.Popen[str]], tmp_path: Path
) -> None:
    kept, taken_back = tmp_path / "brief", tmp_path / "taken-back"
    for directory in (kept, taken_back):
        directory.mkdir()
        (directory / "brief.md").write_text("the brief")
    [warden_pid] = _spawn(owner, _SCRATCH_OWNER, str(kept), str(taken_back))
    assert kept.exists()
    owner[-1].kill()
    assert _gone([warden_pid], DIES_WITHIN_SECONDS) is not None  # the warden is done
    assert not kept.exists()
    assert (taken_back / "brief.md").read_text() == "the brief"


def test_a_scratch_path_with_a_newline_is_refused_before_the_warden_hears_it() -> None:
    with pytest.raises(ValueError, match="newline"):
        Warden().remove_at_death(Path("/tmp/a\nu /etc"))


def test_a_sweep_removes_what_scratch_a_dead_owner_and_its_warden_left(tmp_path: Path) -> None:
    from supervisors import warden_main

    assert warden_main.SCRATCH_PREFIX == warden_module.SCRATCH_PREFIX
    gone = subprocess.Popen(["true"])
    gone.wait()  # its records' lock is free: what a sweep reads as a dead owner
    records = tmp_path / "groups" / str(gone.pid)
    records.mkdir(parents=True)
    brief = Path(tempfile.mkdtemp(prefix="hive-brief-"))
    taken_back = Path(tempfile.mkdtemp(prefix="hive-brief-"))
    outside = tmp_path / "not-scratch"  # not right under the temporary directory
    try:
        for directory in (brief, taken_back, outside):
            directory.mkdir(exist_ok=True)
            (directory / "brief.md").write_text("the brief")
        scratch: set[str] = set()
        # the owner's lines as its warden heard them; the records come first here, and
        # a later `d` writes the scratch records too
        kept: Path | None = None
        for line in (f"p {brief}", f"d {records}", f"p {outside}", f"p {taken_back}"):
            kept = warden_main._obey(line, {}, {}, kept, scratch)
        assert kept == records
        warden_main._obey(f"u {taken_back}", {}, {}, records, scratch)
        scratch_records = [p for p in records.iterdir() if p.name.startswith("scratch-")]
        assert len(scratch_records) == 2  # brief, outside; taken back: forgotten
        assert sweep(tmp_path / "groups") == []
        assert not brief.exists()
        assert (outside / "brief.md").read_text() == "the brief"
        assert (taken_back / "brief.md").read_text() == "the brief"
        assert not records.exists()
    finally:
        for directory in (brief, taken_back):
            shutil.rmtree(directory, ignore_errors=True)


def test_the_warden_kills_a_group_whose_leader_is_gone_without_walking_proc(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At its owner's death the warden kills at once: a group whose leader was already
    reaped (its parent-death signal) is killed without reading every process's /proc
    entry to find its members, which took 0.1 s and more a group on a loaded machine."""
    from supervisors import warden_main

    leader = subprocess.Popen(
        ["/bin/sh", "-c", "sleep 600 & echo $!"], stdout=subprocess.PIPE, start_new_session=True
    )
    assert leader.stdout is not None
    member = int(leader.stdout.readline())
    started = start_time(leader.pid)
    leader.wait()  # the leader is gone and reaped; its group lives on in `member`
    assert started is not None and start_time(leader.pid) is None and process_alive(member)
    monkeypatch.setattr(warden_main, "_PROC", tmp_path)  # a walk would find no one
    try:
        warden_main.kill(leader.pid, started)
        assert _gone([member], DEADLINE_SECONDS) is not None
    finally:
        if process_alive(member):
            os.kill(member, signal.SIGKILL)
