"""Local `hive serve` processes for `hive demo`, the drain and recovery benchmarks and the
end-to-end tests: start one with its own `HIVE_` environment, signal it, wait for its
exit, read its log, and kill every process it left behind.

Each process is a real `python -m hive serve`, in its own session, its output in a log
file (a pipe nobody reads would fill and stall it). Everything it runs lives under one
root directory (its workdir, its bees' worktrees), so whatever is still running there at
the end, the bees included (they run in sessions of their own), is found in /proc by its
working directory or command line and killed with its process group (by
`hive.agents.stopping.kill_group`, the hive's one group stop): nothing is left.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TypeVar

from hive.agents.stopping import kill_group, process_alive
from hive.errors import HiveError

T = TypeVar("T")

POLL_SECONDS = 0.05
KILL_WAIT_SECONDS = 5.0
_PROC = Path("/proc")


class WaitTimeout(HiveError):
    """A condition did not hold by its deadline; the message says which."""


def wait_for(
    condition: Callable[[], T | None],
    seconds: float,
    what: str,
    *,
    poll_seconds: float = POLL_SECONDS,
) -> T:
    """Poll `condition` until it returns something truthy, and return that; raise
    WaitTimeout naming `what` once `seconds` have passed."""
    deadline = time.monotonic() + seconds
    pause = threading.Event()
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise WaitTimeout(f"{what}: not within {seconds:g} s")
        pause.wait(poll_seconds)


def clean_environment(extra: Mapping[str, str]) -> dict[str, str]:
    """This process's environment without any `HIVE_` variable, plus `extra`: a child
    gets exactly the hive configuration it is given."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("HIVE_")}
    env.update(extra)
    return env


@dataclass
class Serve:
    """One `hive serve` process."""

    name: str
    popen: subprocess.Popen[bytes]
    log_path: Path
    started: float
    _log: IO[bytes] = field(repr=False)

    @property
    def pid(self) -> int:
        return self.popen.pid

    def send(self, signum: int) -> float:
        """Send `signum` to the process (not its group); the monotonic time it was sent."""
        sent = time.monotonic()
        os.kill(self.pid, signum)
        return sent

    def exit_code(self) -> int | None:
        return self.popen.poll()

    def wait(self, seconds: float) -> int:
        """Its exit code; WaitTimeout when it is still running after `seconds`."""
        try:
            return self.popen.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            still = f"{self.name} (pid {self.pid}) still runs after {seconds:g} s"
            raise WaitTimeout(still) from None

    def log(self) -> str:
        self._log.flush()
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def tail(self, lines: int = 40) -> str:
        return "\n".join(self.log().splitlines()[-lines:])

    def kill(self) -> None:
        """SIGKILL the process (a crash, as far as the hive can tell)."""
        if self.popen.poll() is None:
            self.popen.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(timeout=KILL_WAIT_SECONDS)
        self._log.close()


def start_serve(
    name: str,
    env: Mapping[str, str],
    *,
    cwd: Path,
    log_dir: Path,
) -> Serve:
    """Start `python -m hive serve` with exactly `env` as its hive configuration (the
    caller's `HIVE_` variables are not inherited), in `cwd`, logging to
    `log_dir/<name>.log`."""
    log_dir.mkdir(parents=True, exist_ok=True)
    log_path = log_dir / f"{name}.log"
    log = log_path.open("ab")
    popen = subprocess.Popen(
        [sys.executable, "-m", "hive", "serve"],
        env=clean_environment(env),
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # our signals reach it alone, never the caller's group
    )
    return Serve(name, popen, log_path, time.monotonic(), log)


# ---- what is left running ------------------------------------------------------------


# a live (non-zombie) process, as the turn-stopping code reads /proc
pid_alive = process_alive


def processes_under(root: Path) -> list[int]:
    """Live processes whose working directory is under `root` or whose command line
    names it: a serve process, its bees and whatever they started, wherever their
    session is. Never this process."""
    marker = str(root.resolve())
    found = []
    for entry in _PROC.iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        if not process_alive(int(entry.name)):
            continue
        try:
            cwd = os.readlink(entry / "cwd")
        except OSError:
            cwd = ""
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            cmdline = ""
        if cwd == marker or cwd.startswith(marker + "/") or marker in cmdline:
            found.append(int(entry.name))
    return found


def kill_everything_under(root: Path, serves: Sequence[Serve] = ()) -> list[int]:
    """SIGKILL `serves` and every process left under `root`, each with its process group
    (never this process's group); the pids that were still alive."""
    for serve in serves:
        serve.kill()
    mine = os.getpgrp()
    killed: list[int] = []
    for _round in range(3):  # a dying group may have started one more process
        left = processes_under(root)
        if not left:
            break
        killed += left
        groups: set[int] = set()
        for pid in left:
            try:
                group = os.getpgid(pid)
            except ProcessLookupError:
                continue
            if group > 1 and group != mine:
                groups.add(group)
            else:  # a process in our own group: it alone
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
        for group in sorted(groups):
            with contextlib.suppress(PermissionError):
                kill_group(group)
        try:
            wait_for(lambda: not processes_under(root), KILL_WAIT_SECONDS, "strays to die")
        except WaitTimeout:
            continue
    return sorted(set(killed))
