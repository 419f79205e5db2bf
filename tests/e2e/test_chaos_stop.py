"""A SIGTERM or SIGINT to a running `hive chaos` stops everything it started (the Queen,
the runners and their agents, git daemon, its PostgreSQL) and exits 128 + the signal with
one line that says so. Before, the Queen, the runners and PostgreSQL ran on.

`hive chaos` runs under a small keeper that is a child subreaper: whatever the run
started and left (a daemonised PostgreSQL included) becomes the keeper's child, so the
keeper can name every process still alive after the run exited, and kill it."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from hive.swarm import clean_environment, wait_for

pytestmark = [pytest.mark.e2e, pytest.mark.live]

SEED = 15
STARTS_WITHIN_SECONDS = 240.0  # the swarm serves in about 15 s on a quiet machine
STOPS_WITHIN_SECONDS = 120.0
FAULT_LINE = re.compile(r"^\s+\d+\.\d s  ")

# argv: the run's command. Prints the run's pid, then (once it exited) one JSON line:
# its exit code and every descendant still alive a moment later (pid and command line);
# then kills those.
_KEEPER = textwrap.dedent(
    """
    import ctypes, json, os, signal, subprocess, sys, time
    PR_SET_CHILD_SUBREAPER = 36
    assert ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    run = subprocess.Popen(sys.argv[1:], stdin=subprocess.DEVNULL)
    print(run.pid, flush=True)
    code = run.wait()

    def descendants():
        parent = {}
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                raw = open(f"/proc/{entry}/stat").read()
            except OSError:
                continue
            fields = raw[raw.rfind(")") + 2 :].split()
            if fields[0] not in ("Z", "X"):
                parent[int(entry)] = int(fields[1])
        mine, found = os.getpid(), []
        for pid in parent:
            up, seen = parent.get(pid), 0
            while up is not None and up > 1 and seen < 64:
                if up == mine:
                    found.append(pid)
                    break
                up, seen = parent.get(up), seen + 1
        return found

    def reap():
        while True:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return

    # a git process a thread of the run had started may take a moment to end
    deadline = time.monotonic() + float(os.environ["KEEPER_LINGER_SECONDS"])
    left = descendants()
    while left and time.monotonic() < deadline:
        time.sleep(0.1)
        reap()
        left = descendants()
    named = []
    for pid in left:
        try:
            cmd = open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\\0", b" ").decode()
        except OSError:
            cmd = "?"
        named.append([pid, cmd.strip()])
    print(json.dumps({"code": code, "left": named}), flush=True)
    for pid, _ in named:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    time.sleep(0.5)
    reap()
    """
)
LINGER_SECONDS = 5.0


@pytest.mark.parametrize(
    ("signum", "when"),
    [
        (signal.SIGTERM, "after the first fault"),
        (signal.SIGINT, "while the swarm starts"),
    ],
)
def test_a_stop_signal_to_hive_chaos_stops_every_process_it_started(
    tmp_path: Path, signum: int, when: str
) -> None:
    said = tmp_path / "said.log"
    command = [sys.executable, "-m", "hive", "chaos", "--size", "small", "--seed", str(SEED)]
    command += ["--json", "--dir", str(tmp_path / "chaos")]
    env = clean_environment({"KEEPER_LINGER_SECONDS": str(LINGER_SECONDS)})
    with said.open("wb") as stderr:
        keeper = subprocess.Popen(
            [sys.executable, "-c", _KEEPER, *command],
            stdout=subprocess.PIPE,
            stderr=stderr,
            env=env,
            text=True,
        )
    try:
        assert keeper.stdout is not None
        run_pid = int(keeper.stdout.readline())

        def moment() -> bool:
            lines = said.read_text(errors="replace").splitlines()
            if when == "while the swarm starts":
                return any(line.strip().endswith("faults") for line in lines)
            return any(FAULT_LINE.match(line) for line in lines)

        wait_for(moment, STARTS_WITHIN_SECONDS, f"the run to be {when}", poll_seconds=0.05)
        os.kill(run_pid, signum)
        out, _ = keeper.communicate(timeout=STOPS_WITHIN_SECONDS + LINGER_SECONDS)
    finally:
        if keeper.poll() is None:
            keeper.kill()
            keeper.wait()
    text = said.read_text(errors="replace")
    found = json.loads(out.strip().splitlines()[-1])
    assert found["left"] == [], f"{when}, {signal.Signals(signum).name} left running: {found}"
    assert found["code"] == 128 + signum, text
    name = signal.Signals(signum).name
    assert f"stopped by {name} after" in text and "every process it started is stopped" in text
    assert "Traceback" not in text, text
