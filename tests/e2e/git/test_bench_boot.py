"""`hive bench git --repo PATH --boot` runs as a user runs it: a runner's boot to its
first claim, whole and shallow, beside the clones and steps of the same repository."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hive.testing import make_repo

pytestmark = [pytest.mark.e2e, pytest.mark.live]

BENCH_SECONDS = 300


def test_bench_git_on_a_repository_measures_a_runners_boot_to_its_first_claim(
    tmp_path: Path, hive_pg_url: str
) -> None:
    files = {f"src/f{n}.py": f"x = {n}\n" for n in range(30)}
    repo = make_repo(tmp_path / "repo", files)
    env = {k: v for k, v in os.environ.items() if not k.startswith("HIVE_")}
    env["HIVE_DATABASE_URL"] = hive_pg_url
    argv = ["--repo", str(repo), "--boot", "--depth", "1", "--runs", "1", "--json"]

    done = subprocess.run(
        [sys.executable, "-m", "hive", "bench", "git", *argv],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=BENCH_SECONDS,
    )

    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads(done.stdout)
    assert result["boot_s_hive"] > 0 and result["boot_s_hive_shallow"] > 0
    assert result["clone_wire_s_git"] > 0 and result["cut_ms_hive"] > 0
