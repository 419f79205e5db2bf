"""`python -m hive demo` as a user runs it (`make run`), against the test server."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from hive.commands.demo import shown_url
from hive.swarm import processes_under

from .harness import git

pytestmark = [pytest.mark.e2e, pytest.mark.live]

DEMO_SECONDS = 240
ROW = re.compile(r"^\s*(\d+)\s+(runner-\d)\s+(\S.*?)\s+(\d+)\s+(\d+) B\s+\S")


def demo(tmp_path: Path, url: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HIVE_")}
    env["HIVE_DATABASE_URL"] = url
    return subprocess.run(
        [sys.executable, "-m", "hive", "demo", "--dir", str(tmp_path / "demo"), *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=DEMO_SECONDS,
    )


def summary(out: str) -> dict[int, tuple[str, str, int, int]]:
    rows = {}
    for line in out.splitlines():
        match = ROW.match(line)
        if match:
            issue, runner, outcome, commits, size = match.groups()
            rows[int(issue)] = (runner, outcome.strip(), int(commits), int(size))
    return rows


def test_hive_demo_runs_the_flow_prints_the_summary_and_a_fetch_line_that_works(
    tmp_path: Path, hive_pg_url: str
) -> None:
    try:
        done = demo(tmp_path, hive_pg_url)
        assert done.returncode == 0, done.stdout + done.stderr
        rows = summary(done.stdout)
        assert sorted(rows) == [1, 2, 3, 4, 5], done.stdout
        for runner, outcome, commits, size in rows.values():
            assert runner in ("runner-1", "runner-2")
            assert outcome == "finished"
            assert commits == 1 and size > 0
        assert done.stdout.count("drained and exited 0") == 3

        # the printed lines fetch issue 1's work into the sample repository with git
        export = next(ln for ln in done.stdout.splitlines() if "export HIVE_DATABASE_URL=" in ln)
        fetch = next(ln for ln in done.stdout.splitlines() if "hive export" in ln)
        bin_dir = str(Path(sys.executable).parent)
        shell_env = {k: v for k, v in os.environ.items() if not k.startswith("HIVE_")}
        shell_env["PATH"] = f"{bin_dir}:{shell_env.get('PATH', '/usr/bin:/bin')}"
        script = f"set -e\n{export.strip()}\n{fetch.strip()}\n"
        ran = subprocess.run(
            ["/bin/sh", "-c", script],
            cwd=tmp_path,
            env=shell_env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert ran.returncode == 0, ran.stderr
        repo = tmp_path / "demo" / "repo"
        assert "def farewell" in git("show", "queen-1:greet.py", cwd=repo)

        # a second run starts clean: the same five issues, each finished once more
        again = demo(tmp_path, hive_pg_url)
        assert again.returncode == 0, again.stdout + again.stderr
        assert sorted(summary(again.stdout)) == [1, 2, 3, 4, 5]
        assert all(r[1] == "finished" and r[2] == 1 for r in summary(again.stdout).values())
    finally:
        left = processes_under(tmp_path)
        for pid in left:
            os.kill(pid, 9)
    assert left == [], "hive demo left processes running"


def test_hive_demo_that_runs_out_of_time_says_so_in_one_line_and_leaves_nothing_running(
    tmp_path: Path, hive_pg_url: str
) -> None:
    done = demo(tmp_path, hive_pg_url, "--timeout", "0.1")
    assert done.returncode == 1
    (last,) = done.stderr.strip().splitlines()
    assert last.startswith("hive: demo: issues [") and "did not end within 0.1 s" in last, last
    assert processes_under(tmp_path) == []


def test_the_fetch_line_never_prints_a_password() -> None:
    shown = shown_url("postgresql://hive:s3cret@db.example:5432/hive_demo")
    assert "s3cret" not in shown and "YOUR-PASSWORD" in shown
    assert shown_url("user=postgres dbname=hive_demo host=/tmp/x").endswith("host=/tmp/x")
