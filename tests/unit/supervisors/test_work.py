"""Long work outside the handler: WatchedProcess and the kill that reaches its group."""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from supervisors import (
    ChildSpec,
    GroupStop,
    ProcessExited,
    SupervisedActor,
    Supervisor,
    WatchedProcess,
)
from supervisors.work import setpriv, wrapped

from .helpers import DEADLINE_SECONDS, ref_of

_SLEEPER = "import time; time.sleep(60)"
_PARENT_OF_SLEEPER = (
    "import subprocess, sys, time;"
    f"p = subprocess.Popen([sys.executable, '-c', {_SLEEPER!r}]);"
    "print(p.pid, flush=True); time.sleep(60)"
)


def _gone(pid: int) -> bool:
    """True once ``pid`` no longer runs (absent, or a zombie nobody reaped yet)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def _wait_gone(pid: int) -> None:
    deadline = time.monotonic() + DEADLINE_SECONDS
    while not _gone(pid):
        assert time.monotonic() < deadline, f"process {pid} still runs"
        time.sleep(0.01)  # polling a real condition with a deadline


def test_the_owner_is_told_the_exit_code() -> None:
    exits: queue.Queue[ProcessExited] = queue.Queue()
    watched = WatchedProcess.start([sys.executable, "-c", "raise SystemExit(3)"], on_exit=exits.put)
    assert exits.get(timeout=DEADLINE_SECONDS).returncode == 3
    assert watched.terminate(0.1) is GroupStop.ENDED  # safe after the end


def test_the_actor_kill_hook_kills_the_whole_process_group() -> None:
    class Owner(SupervisedActor):
        pass

    ref = Owner.start()
    owner = SupervisedActor.of(ref)
    assert owner is not None
    watched = WatchedProcess.start(
        [sys.executable, "-c", _PARENT_OF_SLEEPER], owner=owner, stdout=subprocess.PIPE, text=True
    )
    assert watched.popen.stdout is not None
    grandchild = int(watched.popen.stdout.readline())
    owner.on_kill()
    assert watched.exited.wait(DEADLINE_SECONDS)
    _wait_gone(grandchild)
    ref.stop()


def test_a_child_stuck_on_its_process_is_freed_by_the_kill_at_its_timeout() -> None:
    """The anti-pattern (waiting inside the handler) still cannot hang the tree: the kill
    reaches the process group, the handler returns, the stop goes through."""
    entered: queue.Queue[int] = queue.Queue()

    class Stuck(SupervisedActor):
        def on_receive(self, message: Any) -> Any:
            watched = WatchedProcess.start([sys.executable, "-c", _SLEEPER], owner=self)
            entered.put(watched.pgid)
            watched.exited.wait()

    sup = Supervisor("root", [ChildSpec("stuck", Stuck.start, shutdown=0.2)]).start()
    ref_of(sup, "stuck").tell("run")
    pgid = entered.get(timeout=DEADLINE_SECONDS)
    sup.stop(timeout=DEADLINE_SECONDS)
    assert sup.stats()["shutdown_killed"] == 1
    _wait_gone(pgid)


def test_terminate_asks_the_group_first() -> None:
    watched = WatchedProcess.start([sys.executable, "-c", _SLEEPER])
    assert watched.terminate(grace_seconds=DEADLINE_SECONDS) is GroupStop.ENDED
    assert watched.popen.returncode == -15


def test_a_leader_starts_without_python_in_the_child_and_becomes_its_program() -> None:
    """setpriv and the shell's check, then the program in the same pid: the group's
    leader (no preexec_fn, so subprocess may vfork)."""
    assert setpriv() is not None, "this machine's setpriv sets a parent-death signal"
    watched = WatchedProcess.start(["sleep", "60"])
    try:
        assert watched.popen.args[0] == setpriv()
        assert os.getpgid(watched.popen.pid) == watched.pgid == watched.popen.pid
        deadline = time.monotonic() + DEADLINE_SECONDS
        cmdline = b""
        while cmdline != b"sleep\x0060\x00":
            assert time.monotonic() < deadline, f"the leader runs {cmdline!r}"
            cmdline = Path(f"/proc/{watched.pgid}/cmdline").read_bytes()
            time.sleep(0.01)  # polling a real condition with a deadline
    finally:
        watched.kill()
    assert watched.exited.wait(DEADLINE_SECONDS)


def test_a_shell_script_takes_the_check_in_front_and_keeps_its_arguments(tmp_path: Path) -> None:
    out = tmp_path / "out"
    exits: queue.Queue[ProcessExited] = queue.Queue()
    WatchedProcess.start(
        ["/bin/sh", "-c", 'echo "$0 $1 $2" > "$3"', "name", "a b", "c", str(out)],
        on_exit=exits.put,
    )
    assert exits.get(timeout=DEADLINE_SECONDS).returncode == 0
    assert out.read_text() == "name a b c\n"
    program = str(tmp_path / "program")
    Path(program).write_text('#!/bin/sh\necho "$0|$1|$#" > "$1"\n')
    os.chmod(program, 0o755)
    WatchedProcess.start([program, str(out)], on_exit=exits.put)
    assert exits.get(timeout=DEADLINE_SECONDS).returncode == 0
    assert out.read_text() == f"{program}|{out}|1\n"


@pytest.mark.parametrize("script", [False, True])
def test_a_leader_whose_starter_is_already_gone_kills_itself_before_its_program(
    tmp_path: Path, script: bool
) -> None:
    """The starter died before setpriv set the signal: the shell finds another parent."""
    ran = tmp_path / "ran"
    argv = ["/bin/sh", "-c", f"touch {ran}"] if script else ["touch", str(ran)]
    program = setpriv()
    assert program is not None
    not_the_parent = os.getppid()  # this process's own parent: never the child's
    done = subprocess.run(wrapped(argv, not_the_parent, program), check=False)
    assert done.returncode == -signal.SIGKILL
    assert not ran.exists()
    assert subprocess.run(wrapped(argv, os.getpid(), program), check=False).returncode == 0
    assert ran.exists()


def test_a_program_that_cannot_start_raises_in_the_starter(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        WatchedProcess.start(["hive-no-such-program"])
    with pytest.raises(FileNotFoundError):
        WatchedProcess.start([str(tmp_path / "absent")])
    with pytest.raises(FileNotFoundError):
        WatchedProcess.start(["./absent"], cwd=tmp_path)
    plain = tmp_path / "plain"
    plain.write_text("echo\n")
    with pytest.raises(PermissionError):
        WatchedProcess.start([str(plain)])
    with pytest.raises(PermissionError):
        WatchedProcess.start([str(tmp_path)])
    with pytest.raises(FileNotFoundError):
        WatchedProcess.start(["true"], env={"PATH": str(tmp_path)})


@pytest.mark.parametrize("found", ["none", "refuses"])
def test_without_a_setpriv_that_sets_the_signal_starts_take_the_full_fork_and_say_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, found: str
) -> None:
    """No setpriv on PATH, or one too old for --pdeathsig (it exits 1): None, one line."""
    if found == "refuses":
        old = tmp_path / "setpriv"
        old.write_text("#!/bin/sh\necho 'setpriv: unrecognized option' >&2\nexit 1\n")
        old.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:/usr/bin:/bin" if found == "refuses" else str(tmp_path))
    with caplog.at_level("WARNING", logger="supervisors"):
        assert setpriv.__wrapped__() is None
    assert "process groups start with a full fork" in caplog.text
