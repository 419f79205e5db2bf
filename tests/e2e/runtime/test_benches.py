"""`hive bench drain` and `hive bench recovery` run as a user runs them, once each, and
their figures hold the bounds they are reported against."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hive.swarm import processes_under

pytestmark = [pytest.mark.e2e, pytest.mark.live]

BENCH_SECONDS = 240


def bench(tmp_path: Path, url: str, *args: str) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HIVE_")}
    env["HIVE_DATABASE_URL"] = url
    done = subprocess.run(
        [sys.executable, "-m", "hive", "bench", *args, "--json", "--runs", "1"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=BENCH_SECONDS,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def test_bench_drain_exits_fast_with_no_bees_and_hands_every_bee_back_at_the_cap(
    tmp_path: Path, hive_pg_url: str
) -> None:
    result = bench(tmp_path, hive_pg_url, "drain", "--bees", "2", "--cap", "1")
    assert result["no_bees_ratio"] < 1.0, result
    assert result["held_finished"] == 2, "bees ending before the cap end as finished"
    assert result["held_drain_s"] >= result["held_turn_left_s"], "the drain cut a bee short"
    assert result["handed_back"] == 2
    assert result["handback_s"] >= 0 and result["handback_ratio"] < 1.0, result
    assert result["cap_exit_ratio"] < 1.0, result


def test_bench_recovery_frees_a_killed_runners_order_and_runs_no_duplicate_turn(
    tmp_path: Path, hive_pg_url: str
) -> None:
    result = bench(tmp_path, hive_pg_url, "recovery", "--silent", "2")
    assert result["duplicate_turns"] == 0
    assert result["finished_after"] == 1
    # not before the window has passed since the last heartbeat (at most one runner
    # period, 0.2 s, before the kill), and on time: the reaper looks four times a window
    assert (2.0 - 0.2) / 2.0 <= result["free_ratio"] <= 1.25 + 0.5, result
    assert result["reclaimed_s"] >= result["free_s"]
    assert processes_under(tmp_path) == []
