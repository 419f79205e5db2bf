"""Long work outside the handler: WatchedProcess and the kill that reaches its group."""

from __future__ import annotations

import queue
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from supervisors import (
    ChildSpec,
    GroupStop,
    ProcessExited,
    SupervisedActor,
    Supervisor,
    WatchedProcess,
)

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
