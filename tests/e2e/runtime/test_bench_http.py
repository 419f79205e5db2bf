"""`hive bench http` runs as a user runs it: every server answers, the hive's own with no
error while slow clients are connected."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.e2e, pytest.mark.live]


def test_bench_http_loads_each_server_and_the_hive_s_answers_every_request(
    tmp_path: Path, hive_pg_url: str
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HIVE_")}
    env["HIVE_DATABASE_URL"] = hive_pg_url
    args = ["--seconds", "2", "--clients", "10", "--slow", "20", "--runs", "1", "--json"]
    done = subprocess.run(
        [sys.executable, "-m", "hive", "bench", "http", *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads(done.stdout)
    assert result["pool_errors"] == 0
    assert result["pool_per_s"] > 0 and result["pool_p50_ms"] <= result["pool_p99_ms"]
    assert result["threads_per_s"] > 0
    assert "waitress_per_s" in result or result["waitress"].startswith("not installed")
