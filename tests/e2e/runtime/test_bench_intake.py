"""`hive bench intake` runs as a user runs it: every issue is queued by the Queen's
NOTIFY, far inside her 30 s tick."""

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


def test_bench_intake_queues_each_issue_long_before_the_queens_tick(
    tmp_path: Path, hive_pg_url: str
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HIVE_")}
    env["HIVE_DATABASE_URL"] = hive_pg_url
    done = subprocess.run(
        [sys.executable, "-m", "hive", "bench", "intake", "--samples", "3", "--json"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=BENCH_SECONDS,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads(done.stdout)
    assert result["samples"] == 3 and result["queen_tick_seconds"] == 30.0
    # a tick would take 0 to 30 s; a loaded machine's NOTIFY path stays far inside it
    assert 0 <= result["issue_to_queued_p50_ms"] <= result["issue_to_queued_max_ms"] < 5000
    assert processes_under(tmp_path) == []
