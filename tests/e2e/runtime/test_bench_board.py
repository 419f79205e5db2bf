"""`hive bench board` runs as a user runs it: the browser sees every card move, no console
error, and the page's weight and SIGTERM figures are reported; a bad option is one line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hive.board.browser import missing

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.live,
    pytest.mark.skipif(missing() is not None, reason=str(missing())),
]


def bench(tmp_path: Path, url: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HIVE_")}
    env["HIVE_DATABASE_URL"] = url
    return subprocess.run(
        [sys.executable, "-m", "hive", "bench", "board", *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )


def test_bench_board_measures_paint_weight_moves_and_sigterm(tmp_path: Path, hive_pg_url: str):
    args = ("--issues", "8", "--events", "5", "--loads", "2", "--streams", "3", "--json")
    done = bench(tmp_path, hive_pg_url, *args)
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads(done.stdout)
    assert result["console_errors"] == 0
    assert result["first_paint_ms"] > 0 and 0 < result["move_p50_ms"] <= result["move_max_ms"]
    assert result["page_bytes"] == sum(
        result[f"page_{part}_bytes"] for part in ("html", "css", "js")
    )
    assert result["streams_open"] == 3 and result["sigterm_exit_with_streams_s"] > 0


def test_more_events_than_issues_is_one_line(tmp_path: Path, hive_pg_url: str):
    done = bench(tmp_path, hive_pg_url, "--issues", "2", "--events", "3")
    assert done.returncode != 0
    assert done.stderr.strip().splitlines()[-1].endswith("needs as many issues (--issues 2)")
