"""A guard that tidies up after a process that died without its own clean-up.

The test fixtures start servers that outlive their starter on purpose: the embedded
PostgreSQL, PgBouncer and Synapse each run in a session of their own. A test session that
ends normally stops them. One that is killed (SIGTERM from a CI timeout or `make soak`'s
stop, SIGKILL) used to leave them running for ever, each holding its memory and its
temporary directory.

`guard(argv)` starts a small watcher beside the caller. The watcher sleeps until its
parent dies, then runs `argv`: the server's stop. A clean end calls `Guard.release()`
first, so the watcher exits and runs nothing.

    python -m hive.orphans PARENT_PID -- ARGV...
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass

_PR_SET_PDEATHSIG = 1
# a stop that hangs must not leave the watcher behind either
STOP_TIMEOUT_SECONDS = 60.0


@dataclass
class Guard:
    """A watcher that runs a stop when the process that made it dies."""

    process: subprocess.Popen[bytes]

    def release(self) -> None:
        """The owner cleans up itself: the watcher goes without running its stop."""
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()


def guard(argv: Sequence[str]) -> Guard:
    """Start a watcher that runs `argv` once this process has died (see the module)."""
    watcher = subprocess.Popen(
        [sys.executable, "-m", "hive.orphans", str(os.getpid()), "--", *argv],
        stdin=subprocess.DEVNULL,
        start_new_session=True,
    )
    return Guard(watcher)


def guard_group(pgid: int, *remove: str) -> Guard:
    """A guard that ends the process group `pgid` (SIGTERM) and removes the `remove`
    directories once this process has died."""
    script = 'kill -TERM "-$0"; rm -rf -- "$@"'
    return guard(["/bin/sh", "-c", script, str(pgid), *remove])


def _watch(parent: int, argv: list[str]) -> int:
    """Wait for the parent's death, then run `argv`. Signals other than the parent-death
    signal are blocked, so only the parent's end (or SIGKILL) ends the wait."""
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0) != 0:
        return 2
    # the parent may have died before the signal was set: then the parent is another
    if os.getppid() == parent:
        signal.sigwait({signal.SIGTERM})
    # the stop must not inherit the blocked SIGTERM
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
    try:
        return subprocess.run(argv, timeout=STOP_TIMEOUT_SECONDS, check=False).returncode
    except (OSError, subprocess.TimeoutExpired):
        return 1


def main(args: list[str]) -> int:
    if len(args) < 3 or args[1] != "--" or not args[0].isdigit():
        print("usage: python -m hive.orphans PARENT_PID -- ARGV...", file=sys.stderr)
        return 2
    return _watch(int(args[0]), args[2:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
