"""`start_turn(agent_spec, ctx)`: the one door from `HIVE_AGENT` to a started turn."""

from __future__ import annotations

import dataclasses
import shlex
import sys
from pathlib import Path

import hive
from hive.agents.base import Turn, TurnContext, TurnStartError
from hive.agents.claude import start_claude
from hive.agents.codex import start_codex
from hive.agents.command import start_command
from hive.agents.python import start_python
from hive.rules.modes import AgentKind

_AGENTS = "demo, claude, codex, command:<shell command> or python:<module>:<callable>"
# exec: the demo's Python is the group's leader, so its own exit code is the turn's
DEMO_COMMAND = f"exec {shlex.quote(sys.executable)} -m hive.agents.demo"


def demo_brief(brief: str, body: str) -> str:
    """The brief the demo reads: the issue's body is where its instructions are, so it is
    added when the brief does not already quote it (once, or `append` would run twice)."""
    if body.strip() in brief:
        return brief
    return f"{brief.rstrip()}\n\n{body}"


def start_turn(agent_spec: str, ctx: TurnContext, *, begin: bool = True) -> Turn:
    """Start the turn `agent_spec` names (HIVE_AGENT's value); it is running on return.

    With `begin=False` the transcript waits for `turn.begin()`, so the caller can write
    its ledger row before the first line reaches `ctx.on_line`. Raises TurnStartError
    (one line) when the spec is not an agent or the agent cannot start."""
    if agent_spec == AgentKind.DEMO:
        # the demo imports hive from wherever this process does, whatever PYTHONPATH was
        source_root = str(Path(hive.__file__).resolve().parent.parent)
        demo_ctx = dataclasses.replace(ctx, brief=demo_brief(ctx.brief, ctx.body))
        turn: Turn = start_command(DEMO_COMMAND, demo_ctx, extra_env={"PYTHONPATH": source_root})
    elif agent_spec == AgentKind.CLAUDE:
        turn = start_claude(ctx)
    elif agent_spec == AgentKind.CODEX:
        turn = start_codex(ctx)
    elif agent_spec.startswith("command:"):
        turn = start_command(agent_spec[len("command:") :], ctx)
    elif agent_spec.startswith("python:"):
        turn = start_python(agent_spec[len("python:") :], ctx)
    else:
        raise TurnStartError(f"HIVE_AGENT={agent_spec!r} is not an agent: expected {_AGENTS}")
    if begin:
        turn.begin()
    return turn
