"""Shared pieces for the turn adapter tests: a transcript recorder, a context factory,
and a guard that stops every turn a test started, so a failing test leaves no process."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from hive.agents import Turn, TurnContext, start_turn


class Recorder:
    """A thread-safe `on_line` that tests can wait on."""

    def __init__(self) -> None:
        self.lines: list[tuple[str, str]] = []
        self._changed = threading.Condition()

    def __call__(self, kind: str, text: str) -> None:
        with self._changed:
            self.lines.append((kind, text))
            self._changed.notify_all()

    def texts(self, kind: str) -> list[str]:
        with self._changed:
            return [text for k, text in self.lines if k == kind]

    def wait_for(self, predicate: Callable[[list[tuple[str, str]]], bool], seconds: float) -> bool:
        with self._changed:
            return self._changed.wait_for(lambda: predicate(self.lines), timeout=seconds)

    def wait_for_text(self, fragment: str, seconds: float = 5.0) -> bool:
        return self.wait_for(lambda lines: any(fragment in t for _, t in lines), seconds)


def eventually(condition: Callable[[], bool], seconds: float) -> bool:
    """Poll a real condition until it holds or the deadline passes."""
    deadline = time.monotonic() + seconds
    pause = threading.Event()
    while time.monotonic() < deadline:
        if condition():
            return True
        pause.wait(0.02)
    return condition()


def alive(pid: int) -> bool:
    """A real process check, independent of the code under test: /proc, zombies dead."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2] not in "ZX"


@pytest.fixture(autouse=True)
def _no_turn_outlives_its_test(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every turn a test starts is stopped at its end, and its group then killed outright,
    by code that does not depend on the code under test (which may be broken on purpose)."""
    started: list[Turn] = []
    real_started = Turn._started

    def record(turn: Turn) -> None:
        started.append(turn)
        real_started(turn)

    monkeypatch.setattr(Turn, "_started", record)
    yield
    for turn in started:
        turn.stop("the test is over")
        with contextlib.suppress(ProcessLookupError):
            if turn.pgid is not None and turn.pgid != os.getpgrp():
                os.killpg(turn.pgid, signal.SIGKILL)
            elif turn.pid is not None:  # a broken start left it in our group: the leader only
                os.kill(turn.pid, signal.SIGKILL)


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture
def worktree(tmp_path: Path) -> Path:
    path = tmp_path / "wt"
    path.mkdir()
    return path


@pytest.fixture
def make_ctx(worktree: Path, recorder: Recorder) -> Callable[..., TurnContext]:
    base = TurnContext(
        issue=7,
        title="Say hello",
        body="",
        branch="queen-7",
        boundary=("docs", "src/app.py"),
        brief="the brief\nline two\n",
        worktree=worktree,
        turn_max_seconds=60,
        on_line=recorder,
    )

    def make(**changes: Any) -> TurnContext:
        return replace(base, **{"stopping": threading.Event(), **changes})

    return make


@pytest.fixture
def start(make_ctx: Callable[..., TurnContext]) -> Callable[..., Turn]:
    """start(spec, **ctx_changes) -> a started turn (stopped when the test ends)."""

    def begin(spec: str, ctx: TurnContext | None = None, **changes: Any) -> Turn:
        return start_turn(spec, ctx or make_ctx(**changes))

    return begin
