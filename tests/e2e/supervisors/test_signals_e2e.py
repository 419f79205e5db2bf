"""A real SIGTERM to a real process running a small tree."""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

# Run as a module from the repository root, so the checkout's `supervisors` is imported
# whatever the virtualenv's editable install was built from.
REPO = Path(__file__).resolve().parents[3]
MAIN = "tests.e2e.supervisors.tree_main"
DEADLINE_SECONDS = 20.0


class Process:
    def __init__(self, *args: str) -> None:
        self.popen = subprocess.Popen(
            [sys.executable, "-m", MAIN, *args],
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self.lines: list[str] = []
        self._queue: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.popen.stdout is not None
        for line in self.popen.stdout:
            self._queue.put(line.rstrip("\n"))
        self._queue.put(None)

    def wait_for(self, text: str) -> None:
        deadline = time.monotonic() + DEADLINE_SECONDS
        while True:
            line = self._queue.get(timeout=max(0.0, deadline - time.monotonic()))
            if line is None:
                raise AssertionError(f"exited before {text!r}: {self.lines}")
            self.lines.append(line)
            if text in line:
                return

    def finish(self) -> int:
        code = self.popen.wait(timeout=DEADLINE_SECONDS)
        while (line := self._queue.get(timeout=DEADLINE_SECONDS)) is not None:
            self.lines.append(line)
        return code

    def index(self, text: str) -> int:
        return next(i for i, line in enumerate(self.lines) if text in line)


@pytest.fixture
def process() -> Iterator[Process]:
    proc = Process()
    yield proc
    if proc.popen.poll() is None:
        proc.popen.kill()
        proc.popen.wait()


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_drains_then_stops_the_tree_in_reverse_order_and_exits_zero(
    process: Process, signum: int
) -> None:
    process.wait_for("READY")
    os.kill(process.popen.pid, signum)
    assert process.finish() == 0, process.lines
    stops = [line for line in process.lines if "stopped child" in line]
    names = [line.split("stopped child ")[1].split(":")[0] for line in stops]
    assert names[0] == "last", stops
    assert sorted(names[1:4]) == ["bee-0", "bee-1", "bee-2"], stops  # in parallel
    assert names[4:] == ["bees", "first"], stops
    assert process.index("DRAIN first alive") < process.index("DRAIN END")
    assert process.index("DRAIN END") < process.index("stopped child last")


def test_a_second_signal_during_the_drain_is_a_hard_stop() -> None:
    proc = Process("--drain-seconds", "60")
    try:
        proc.wait_for("READY")
        os.kill(proc.popen.pid, signal.SIGTERM)
        proc.wait_for("DRAIN first alive")
        began = time.monotonic()
        os.kill(proc.popen.pid, signal.SIGTERM)
        code = proc.finish()
        assert time.monotonic() - began < 5.0
    finally:
        if proc.popen.poll() is None:
            proc.popen.kill()
    assert code == 128 + signal.SIGTERM, proc.lines
    assert not any("DRAIN END" in line for line in proc.lines)
    assert any("hard stop" in line for line in proc.lines)


def test_a_child_that_ignores_its_stop_does_not_hold_the_process() -> None:
    proc = Process("--stuck")
    try:
        proc.wait_for("READY")
        os.kill(proc.popen.pid, signal.SIGTERM)
        code = proc.finish()
    finally:
        if proc.popen.poll() is None:
            proc.popen.kill()
    assert code == 0, proc.lines
    assert any("stopped child first: abandoned" in line for line in proc.lines), proc.lines
    assert any("exiting with threads still running" in line for line in proc.lines)
