"""Checks (DESIGN 10): `HIVE_CHECK_<NAME>=<shell command>`, each run in a scratch worktree
of the merge result (never in a bee's), in its own process group, bounded by a timeout.

A check is a command turn with no brief and no key: exit 0 passes, another exit fails,
past its timeout it is stopped by the turn-stop rule (SIGTERM to its group, a grace, then
SIGKILL) and counts as timed out, and one that cannot start is an error. The last
TAIL_MAX_CHARS of its output (stdout and stderr, in order) are kept for the send-back.
"""

from __future__ import annotations

import collections
import threading
from dataclasses import dataclass
from pathlib import Path

from hive.agents.base import FINISHED, STOPPED, Turn, TurnContext, TurnStartError
from hive.agents.command import start_command
from hive.agents.transcript import HIVE
from hive.rules.branches import branch_name
from hive.rules.modes import CheckResult

TAIL_MAX_CHARS = 4000
TAIL_MAX_LINES = 200


@dataclass(frozen=True)
class CheckRun:
    """One check's run: its name, result, exit code, seconds and output tail."""

    name: str
    result: CheckResult
    exit_code: int | None
    seconds: float
    tail: str

    @property
    def passed(self) -> bool:
        return self.result is CheckResult.PASS


class CheckTurn:
    """One check running: `run()` blocks until it ends; `stop()` from another thread."""

    def __init__(
        self, name: str, command: str, worktree: Path, *, issue: int, timeout_seconds: float
    ) -> None:
        self.name = name
        self.command = command
        self._tail: collections.deque[str] = collections.deque(maxlen=TAIL_MAX_LINES)
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        self.ctx = TurnContext(
            issue=issue,
            title=f"check {name}",
            body="",
            branch=branch_name(issue),
            boundary=(),
            brief="",
            worktree=worktree,
            turn_max_seconds=timeout_seconds,
            on_line=self._on_line,
        )
        self._turn: Turn | None = None

    def _on_line(self, kind: str, text: str) -> None:
        if kind != HIVE:
            with self._lock:
                self._tail.append(text)

    def run(self) -> CheckRun:
        try:
            turn = start_command(self.command, self.ctx)
        except TurnStartError as err:
            return CheckRun(self.name, CheckResult.ERROR, None, 0.0, str(err))
        self._turn = turn
        if self._stopped.is_set():
            turn.stop("the check was stopped")
        turn.begin()
        turn.wait()
        ending = turn.ending
        assert ending is not None
        if ending.outcome is FINISHED:
            result = CheckResult.PASS
        elif ending.outcome is STOPPED and ending.at_bound:
            result = CheckResult.TIMEOUT
        elif ending.outcome is STOPPED:
            result = CheckResult.ERROR
        else:
            result = CheckResult.FAIL
        with self._lock:
            tail = "\n".join(self._tail)[-TAIL_MAX_CHARS:]
        return CheckRun(self.name, result, ending.exit_code, ending.seconds, tail)

    def stop(self, reason: str) -> None:
        """Stop the check (safe before it started and twice)."""
        self._stopped.set()
        if self._turn is not None:
            self._turn.stop(reason)
