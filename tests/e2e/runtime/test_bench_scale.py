"""`hive bench scale --pgbouncer` runs as a user runs it: claim loops, several a process,
their work through PgBouncer and one LISTEN a process; every order is claimed once, and
the server holds far fewer connections than there are runners."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hive.swarm import processes_under

pytestmark = [pytest.mark.e2e, pytest.mark.live]

BENCH_SECONDS = 240


def scale(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HIVE_")}
    return subprocess.run(
        [sys.executable, "-m", "hive", "bench", "scale", *args, "--json"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=BENCH_SECONDS,
    )


def test_bench_scale_through_pgbouncer_claims_each_order_once_on_few_connections(
    tmp_path: Path,
) -> None:
    args = ("--runners", "24", "--per-process", "8", "--orders", "30", "--rate", "20")
    done = scale(tmp_path, *args, "--pgbouncer")
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads(done.stdout)
    assert (result["runners"], result["processes"], result["pgbouncer"]) == (24, 3, True)
    assert result["double_claims"] == 0 and result["ended_by_loops"] == 30
    # 24 runners: 3 LISTEN connections, the bench's own and PgBouncer's few, never 24
    assert result["server_connections_max"] < 24, result
    assert 0 < result["claim_p50_ms"] <= result["claim_p99_ms"]
    assert result["pg_cpu_ms_per_order"] > 0
    assert processes_under(tmp_path) == []


def test_bench_scale_refuses_runners_the_server_cannot_hold_without_pgbouncer(
    tmp_path: Path,
) -> None:
    done = scale(tmp_path, "--runners", "1000", "--per-process", "50")
    assert done.returncode != 0
    assert "add --pgbouncer" in done.stderr and "Traceback" not in done.stderr
    done = scale(tmp_path, "--runners", "65")
    assert done.returncode != 0 and "at most 64 runner processes" in done.stderr
