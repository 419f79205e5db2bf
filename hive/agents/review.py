"""A review (DESIGN 10, 11): a bounded turn of `HIVE_REVIEWER_AGENT` in a scratch
worktree of the branch's head, whose HIVE-CRITERION lines `hive.rules.criteria` reads.

The reviewer gets the review brief (`review_brief`): the issue, its boundary, its
criteria numbered from 1, the form of the lines to print, and, for a model, what it
needs to judge: the earlier send-backs, the checks' results and the diff against base
(cut at DIFF_MAX_BYTES, with a sentence). `demo` is the demo reviewer
(`hive.agents.demo_review`); `claude`, `codex`, `command:` and `python:` are the bees'
adapters (a model's final message carries its lines: the adapters hand its text on as
`assistant: ...`, read here without that prefix). What a reviewer changes in its
scratch tree is thrown away. A review is bounded at REVIEW_ROW_SECONDS (RULES 8) like
any turn: past it, the turn is stopped by the turn-stop rule and nothing it said is used.
"""

from __future__ import annotations

import re
import shlex
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import hive
from hive.agents.base import Ending, Turn, TurnContext, TurnOutcome, TurnStartError
from hive.agents.claude import start_claude
from hive.agents.codex import start_codex
from hive.agents.command import start_command
from hive.agents.launch import Launch
from hive.agents.python import start_python
from hive.agents.transcript import STDERR, STDOUT
from hive.rules.branches import branch_name
from hive.rules.criteria import MARK
from hive.rules.modes import AgentKind
from hive.rules.reviewer import REVIEW_ROW_SECONDS


def demo_command(module: str) -> str:
    """The command that runs a demo module with this process's Python (`exec`: it is the
    group's leader, so its exit code is the turn's)."""
    return f"exec {shlex.quote(sys.executable)} -m {module}"


DEMO_REVIEW_COMMAND = demo_command("hive.agents.demo_review")
_HEADING = "Criteria:"
_NUMBERED = re.compile(r"^\s*([0-9]+)\.\s+(.*)$")
# The lines a review keeps: its criterion lines (any HIVE- line: a shaper's too) and the
# first few others, for the note.
KEPT_LINES_MAX = 200
KEPT_MARK = "HIVE-"
# How a model's text reaches the transcript (claude.py, codex.py)
ASSISTANT_PREFIX = "assistant: "
_AGENTS = "demo, claude, codex, command:<shell command> or python:<module>:<callable>"


@dataclass(frozen=True)
class Context:
    """What a model reviewer reads beside the criteria: the earlier send-backs (how
    many, and the last one's note), the checks' results (one line each) and the diff
    against base (already bounded, with `diff_cut` saying so)."""

    sendbacks: int = 0
    sendback_note: str = ""
    checks: tuple[str, ...] = ()
    diff: str = ""
    diff_cut: str = ""


def review_brief(
    issue: int,
    title: str,
    body: str,
    boundary: Sequence[str],
    criteria: Sequence[str],
    context: Context | None = None,
) -> str:
    """What the reviewer reads: the issue and its numbered criteria, then the `context`
    (after the lines to print, so the criteria are the brief's first numbered list)."""
    lines = [f"Review the work on issue #{issue}: {title}", ""]
    if body.strip():
        lines += [body.rstrip(), ""]
    lines.append("The work may change only these files:")
    lines += [f"  {path}" for path in boundary]
    lines += ["", _HEADING]
    lines += [f"{n}. {' '.join(text.split())}" for n, text in enumerate(criteria, start=1)]
    lines += [
        "",
        "Judge each criterion against the files in this directory. Print one line each:",
        f"  {MARK} <n> met",
        f"  {MARK} <n> unmet: <why, in one line>",
    ]
    if context is not None:
        lines += _context_lines(context)
    return "\n".join(lines) + "\n"


def _context_lines(context: Context) -> list[str]:
    lines = [
        "Your final message must hold those lines, one for every criterion, and nothing",
        "you change here is kept: judge the work, do not redo it.",
    ]
    if context.sendbacks:
        lines += ["", f"This work was sent back {context.sendbacks} times before."]
        if context.sendback_note.strip():
            lines += ["The last send-back said:", context.sendback_note.rstrip()]
    if context.checks:
        lines += ["", "The checks' results:"]
        lines += [f"  {line}" for line in context.checks]
    if context.diff:
        lines += ["", "The change against base:", context.diff.rstrip()]
    if context.diff_cut:
        lines += ["", context.diff_cut]
    return ["", *lines]


def criteria_from_brief(brief: str) -> list[str]:
    """The numbered criteria of a review brief, in order."""
    found: list[str] = []
    inside = False
    for line in brief.splitlines():
        if line.strip() == _HEADING:
            inside = True
            continue
        if inside:
            match = _NUMBERED.match(line)
            if match is None:
                if found:
                    break
                continue
            found.append(match.group(2))
    return found


def start_review(agent_spec: str, ctx: TurnContext, demo: str = DEMO_REVIEW_COMMAND) -> Turn:
    """Start the reviewer `agent_spec` names (`demo` runs the command `demo`); it is
    running (and begun) on return."""
    if agent_spec == AgentKind.DEMO:
        source_root = str(Path(hive.__file__).resolve().parent.parent)
        turn: Turn = start_command(demo, ctx, extra_env={"PYTHONPATH": source_root})
    elif agent_spec == AgentKind.CLAUDE:
        turn = start_claude(ctx)
    elif agent_spec == AgentKind.CODEX:
        turn = start_codex(ctx)
    elif agent_spec.startswith("command:"):
        turn = start_command(agent_spec[len("command:") :], ctx)
    elif agent_spec.startswith("python:"):
        turn = start_python(agent_spec[len("python:") :], ctx)
    else:
        raise TurnStartError(
            f"HIVE_REVIEWER_AGENT={agent_spec!r} is not an agent: expected {_AGENTS}"
        )
    turn.begin()
    return turn


@dataclass(frozen=True)
class Review:
    """A finished review turn: how it ended, the stdout lines it printed and its last
    stderr line (what a failure's sentence quotes)."""

    ending: Ending
    lines: tuple[str, ...]
    last_error: str = ""

    @property
    def complete(self) -> bool:
        """Whether the reviewer ran to its own end (not stopped, not failed to exit 0)."""
        return self.ending.outcome is TurnOutcome.FINISHED


class ReviewTurn:
    """One review running beside its actor: `start()`, then `wait()`; `stop()` from any
    thread (the drain) stops the turn by the turn-stop rule."""

    def __init__(
        self,
        agent_spec: str,
        *,
        issue: int,
        title: str,
        brief: str,
        boundary: Sequence[str],
        worktree: Path,
        bound_seconds: float = REVIEW_ROW_SECONDS,
        bound_name: str = "HIVE_REVIEW_MAX_SECONDS",
        key: str = "",
        key_env: str = "HIVE_KEY",
        launch: Launch | None = None,
        demo: str = DEMO_REVIEW_COMMAND,
    ) -> None:
        self._lines: list[str] = []
        self._last_error = ""
        self._lock = threading.Lock()
        self.ctx = TurnContext(
            issue=issue,
            title=title,
            body="",
            branch=branch_name(issue),
            boundary=tuple(boundary),
            brief=brief,
            worktree=worktree,
            turn_max_seconds=bound_seconds,
            bound_name=bound_name,
            on_line=self._on_line,
            key=key,
            key_env=key_env,
            launch=launch or Launch(),
        )
        self.agent_spec = agent_spec
        self.demo = demo
        self.turn: Turn | None = None

    def _on_line(self, kind: str, text: str) -> None:
        if kind == STDERR and text.strip():
            self._last_error = text.strip()
        if kind != STDOUT:
            return
        text = text.removeprefix(ASSISTANT_PREFIX)
        with self._lock:
            if text.strip().upper().startswith(KEPT_MARK) or len(self._lines) < KEPT_LINES_MAX:
                self._lines.append(text)

    def start(self) -> None:
        """Start the reviewer. Raises TurnStartError (one line) when it cannot start."""
        self.turn = start_review(self.agent_spec, self.ctx, self.demo)

    def wait(self) -> Review:
        """Wait for the turn's end (its bound ends it at the latest) and its lines."""
        assert self.turn is not None, "start() first"
        self.turn.wait()
        ending = self.turn.ending
        assert ending is not None
        self.turn.transcript.close()
        with self._lock:
            return Review(ending, tuple(self._lines), self._last_error)

    def stop(self, reason: str) -> bool:
        """Stop the review (safe before start and twice); True once it has ended."""
        return True if self.turn is None else self.turn.stop(reason)
