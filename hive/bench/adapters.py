"""adapters: the `claude` and `codex` adapters' own time per turn, beside `command:`.

Each adapter runs a fake of its CLI (`HIVE_AGENT_BIN`: a shell script that prints a
recorded stream, one short turn: the session, an answer, the final usage) and `command:`
runs the same script (`exec <fake>`); the four are interleaved turn by turn, so the
machine's noise falls on each alike. A turn's time is from `start_turn` to its end, the
fake's own run included: `*_over_ms` = the adapter's p50 - `command:`'s p50 on the same
fake is what the adapter adds (reading its stream, its private config directory, looking
for its session file). `*_read` counts the turns whose usage the adapter read from the
stream (each of them, or the bench measured something else).

The sandbox's cost is measured the same way: `command:` on the claude fake once per
mechanism this machine has (`sandbox_<kind>`), interleaved with the plain one;
`sandbox_<kind>_over_ms` = its p50 - the plain p50 is what the sandbox adds to a turn's
start and end (bubblewrap's namespaces, the launcher's Landlock, the wait for
bubblewrap's own processes to go).

How a turn's process starts (issue 28), side by side in the same process, interleaved:
`--spawns` starts of `true` as a group's leader (`supervisors.WatchedProcess`), each
the way the hive starts it now (`spawn_wrapped`: setpriv and a shell's parent check,
no Python in the child, so subprocess uses vfork) and the way it did (`spawn_preexec`:
the same guarantees as a `preexec_fn`, which forces a full fork of this process). Per
start: `*_start_ms`, the caller's wait in `start()`; `*_exit_ms`, from the start to the
leader's exit seen (the child's own steps included); `*_cpu_ms`, this process's CPU
(the fork's copy of its memory map is its own); `*_child_cpu_ms`, the child's.
`spawn_parent_rss_mb` is this process's size, which the full fork's cost follows.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from hive.agents import FINISHED, TurnContext, start_turn
from hive.agents.launch import Launch
from hive.agents.sandbox import Kind, Sandbox
from hive.agents.sandbox_choice import available, bwrap_program
from hive.bench.arguments import whole
from hive.errors import HiveError
from hive.settings import Settings
from supervisors.work import WatchedProcess

INPUT_TOKENS = 100
OUTPUT_TOKENS = 20
TURN_SECONDS = 60.0
SESSION = "0b3f0f1e-1111-2222-3333-444455556666"

CLAUDE_STREAM: list[dict[str, Any]] = [
    {"type": "system", "subtype": "init", "session_id": SESSION, "model": "claude-fake"},
    {
        "type": "assistant",
        "message": {"content": [{"type": "text", "text": "done"}], "usage": {"output_tokens": 1}},
    },
    {
        "type": "result",
        "subtype": "success",
        "is_error": False,
        "usage": {"input_tokens": INPUT_TOKENS, "output_tokens": OUTPUT_TOKENS},
        "modelUsage": {"claude-fake": {}},
        "total_cost_usd": 0.001,
    },
]
CODEX_STREAM: list[dict[str, Any]] = [
    {"type": "thread.started", "thread_id": SESSION},
    {"type": "turn.started"},
    {"type": "item.completed", "item": {"id": "item_0", "type": "agent_message", "text": "done"}},
    {
        "type": "turn.completed",
        "usage": {"input_tokens": INPUT_TOKENS, "output_tokens": OUTPUT_TOKENS},
    },
]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--turns", type=whole(1, 10_000), default=200, help="turns of each (interleaved)"
    )
    parser.add_argument(
        "--spawns",
        type=whole(0, 100_000),
        default=200,
        help="process starts of each kind, wrapped and preexec (interleaved; 0: none)",
    )


def run(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="hive-bench-adapters-") as tmp:
        root = Path(tmp)
        worktree = root / "worktree"
        worktree.mkdir()
        fakes = {"claude": _fake(root, "claude", CLAUDE_STREAM)}
        fakes["codex"] = _fake(root, "codex", CODEX_STREAM)
        # (agent spec, the fake it runs): each adapter, and command: on its fake
        bare = Sandbox()
        variants = [(agent, agent, fake, bare) for agent, fake in fakes.items()]
        variants += [(f"command_{a}", f"command:exec {f}", f, bare) for a, f in fakes.items()]
        # the fakes and their streams are the operator's files: seen read-only
        kinds = [replace(boxed, paths=(str(root),)) for boxed in sandbox_kinds()]
        for boxed in kinds:
            fake = fakes["claude"]
            variants.append((f"sandbox_{boxed.kind}", f"command:exec {fake}", fake, boxed))
        took: dict[str, list[float]] = {name: [] for name, _, _, _ in variants}
        cpu: dict[str, list[float]] = {name: [] for name in took}
        read = dict.fromkeys(took, 0)
        for _ in range(args.turns):
            for name, spec, fake, sandbox in variants:
                before = _children_cpu_seconds()
                seconds, usage_read = _turn(spec, fake, worktree, sandbox)
                cpu[name].append((_children_cpu_seconds() - before) * 1000)
                took[name].append(seconds * 1000)
                read[name] += usage_read
    result: dict[str, Any] = {"turns": args.turns}
    for agent in fakes:
        mine, plain = took[agent], took[f"command_{agent}"]
        result[f"command_{agent}_p50_ms"] = statistics.median(plain)
        result[f"command_{agent}_p99_ms"] = _p99(plain)
        result[f"{agent}_p50_ms"] = statistics.median(mine)
        result[f"{agent}_p99_ms"] = _p99(mine)
        result[f"{agent}_over_ms"] = statistics.median(mine) - statistics.median(plain)
        result[f"{agent}_ratio"] = statistics.median(mine) / statistics.median(plain)
        result[f"{agent}_read"] = read[agent]
    unboxed = statistics.median(took["command_claude"])
    unboxed_cpu = statistics.median(cpu["command_claude"])
    result["command_claude_cpu_ms"] = unboxed_cpu
    for sandbox in kinds:
        name = f"sandbox_{sandbox.kind}"
        result[f"{name}_p50_ms"] = statistics.median(took[name])
        result[f"{name}_p99_ms"] = _p99(took[name])
        result[f"{name}_over_ms"] = statistics.median(took[name]) - unboxed
        # CPU time of the turn's processes (the machine's load does not stretch it)
        result[f"{name}_cpu_ms"] = statistics.median(cpu[name])
        result[f"{name}_cpu_over_ms"] = statistics.median(cpu[name]) - unboxed_cpu
    result["sandboxes"] = [str(sandbox.kind) for sandbox in kinds]
    if args.spawns:
        result |= spawns(args.spawns)
    return result


def _nothing() -> None:
    """A child step that does nothing: it makes the start take the preexec_fn path."""


def spawns(count: int) -> dict[str, Any]:
    """`count` starts of each kind, interleaved (see the module)."""
    kinds = {"wrapped": None, "preexec": _nothing}
    started: dict[str, list[float]] = {name: [] for name in kinds}
    exited: dict[str, list[float]] = {name: [] for name in kinds}
    cpu: dict[str, list[float]] = {name: [] for name in kinds}
    child_cpu: dict[str, list[float]] = {name: [] for name in kinds}
    for _ in range(count):
        for name, setup in kinds.items():
            children_before, self_before = _children_cpu_seconds(), _self_cpu_seconds()
            began = time.perf_counter()
            watched = WatchedProcess.start(["true"], child_setup=setup)
            started[name].append((time.perf_counter() - began) * 1000)
            cpu[name].append((_self_cpu_seconds() - self_before) * 1000)
            if not watched.exited.wait(TURN_SECONDS):
                raise HiveError(f"a started `true` did not exit in {TURN_SECONDS:.0f} s")
            exited[name].append((time.perf_counter() - began) * 1000)
            child_cpu[name].append((_children_cpu_seconds() - children_before) * 1000)
    result: dict[str, Any] = {"spawns": count}
    for name in kinds:
        result[f"spawn_{name}_start_ms"] = statistics.median(started[name])
        result[f"spawn_{name}_start_p99_ms"] = _p99(started[name])
        result[f"spawn_{name}_exit_ms"] = statistics.median(exited[name])
        result[f"spawn_{name}_cpu_ms"] = statistics.mean(cpu[name])
        result[f"spawn_{name}_child_cpu_ms"] = statistics.mean(child_cpu[name])
    result["spawn_start_ratio"] = (
        result["spawn_wrapped_start_ms"] / result["spawn_preexec_start_ms"]
    )
    result["spawn_cpu_ratio"] = result["spawn_wrapped_cpu_ms"] / result["spawn_preexec_cpu_ms"]
    result["spawn_parent_rss_mb"] = _rss_mb()
    return result


def sandbox_kinds() -> list[Sandbox]:
    """Each sandbox this machine runs: bubblewrap's and Landlock alone, as found."""
    found = available()
    kinds = [Kind.BWRAP_SECCOMP, Kind.LANDLOCK] if found is Kind.BWRAP_SECCOMP else [found]
    return [Sandbox(kind=kind, bwrap=bwrap_program()) for kind in kinds if kind is not Kind.OFF]


def _fake(root: Path, agent: str, stream: list[dict[str, Any]]) -> Path:
    """A fake CLI: a script that prints `stream`, whatever its arguments."""
    recorded = root / f"{agent}.jsonl"
    recorded.write_text("".join(json.dumps(event) + "\n" for event in stream))
    fake = root / f"fake-{agent}"
    fake.write_text(f"#!/bin/sh\nexec cat {recorded}\n")
    fake.chmod(0o755)
    return fake


def _turn(spec: str, fake: Path, worktree: Path, sandbox: Sandbox) -> tuple[float, int]:
    """One turn of `spec`; its time and whether its usage was read from the stream."""
    ctx = TurnContext(
        issue=1,
        title="bench",
        body="",
        branch="queen-1",
        boundary=("out.txt",),
        brief="bench",
        worktree=worktree,
        key="sk-bench-key-0000",
        turn_max_seconds=TURN_SECONDS,
        launch=Launch(agent_bin=str(fake), sandbox=sandbox),
    )
    began = time.perf_counter()
    turn = start_turn(spec, ctx)
    if not turn.wait(TURN_SECONDS):
        raise HiveError(f"a turn of {spec} did not end in {TURN_SECONDS:.0f} s")
    seconds = time.perf_counter() - began
    if turn.outcome is not FINISHED:
        raise HiveError(f"a turn of {spec} ended {turn.outcome}, not {FINISHED}")
    usage = turn.usage
    return seconds, int(usage is not None and usage.output_tokens == OUTPUT_TOKENS)


def _children_cpu_seconds() -> float:
    """CPU time of this process's ended children (and theirs, once reaped)."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _self_cpu_seconds() -> float:
    """CPU time of this process (every thread)."""
    used = resource.getrusage(resource.RUSAGE_SELF)
    return used.ru_utime + used.ru_stime


def _rss_mb() -> float:
    """This process's resident size now, in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
