"""`hive bench adapters` runs as a user runs it: every turn of each adapter and of
`command:` on the same fake finished, and each adapter read its usage from the stream
(so the figures are the adapters' own, not a start that failed early); the process
starts, wrapped and preexec, each measured."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hive.bench.adapters import sandbox_kinds
from hive.swarm import processes_under

pytestmark = [pytest.mark.e2e]

TURNS = 5
SPAWNS = 5
BENCH = [sys.executable, "-m", "hive", "bench", "adapters"]


def test_bench_adapters_runs_each_adapter_beside_command_on_the_same_fake(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HIVE_")}
    env["TMPDIR"] = str(tmp_path)  # every fake and turn lives under it
    done = subprocess.run(
        [*BENCH, "--turns", str(TURNS), "--spawns", str(SPAWNS), "--json"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads(done.stdout)
    assert result["turns"] == TURNS
    for agent in ("claude", "codex"):
        assert result[f"{agent}_read"] == TURNS, result
        assert result[f"{agent}_p50_ms"] > 0 and result[f"command_{agent}_p50_ms"] > 0
        assert result[f"{agent}_p99_ms"] >= result[f"{agent}_p50_ms"]
    # the sandbox's cost, beside the same turn unsandboxed, for each mechanism found here
    assert result["sandboxes"] == [str(s.kind) for s in sandbox_kinds()]
    for kind in result["sandboxes"]:
        assert result[f"sandbox_{kind}_p50_ms"] > 0
        assert result[f"sandbox_{kind}_over_ms"] == pytest.approx(
            result[f"sandbox_{kind}_p50_ms"] - result["command_claude_p50_ms"]
        )
    assert result["spawns"] == SPAWNS
    for kind in ("wrapped", "preexec"):
        assert result[f"spawn_{kind}_exit_ms"] >= result[f"spawn_{kind}_start_ms"] > 0
        assert result[f"spawn_{kind}_child_cpu_ms"] > 0
    assert result["spawn_start_ratio"] == pytest.approx(
        result["spawn_wrapped_start_ms"] / result["spawn_preexec_start_ms"]
    )
    assert result["spawn_parent_rss_mb"] > 0
    assert processes_under(tmp_path) == []


def test_bench_adapters_refuses_a_turn_count_out_of_range(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "hive", "bench", "adapters", "--turns", "0"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "is not a whole number from 1 to 10000" in done.stderr
