"""`python -m hive demo` as a user runs it (`make run`), against the test server."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from hive.commands.demo import shown_url
from hive.demo_data import ISSUES, SHAPED
from hive.swarm import processes_under

from .harness import git

pytestmark = [pytest.mark.e2e, pytest.mark.live]

DEMO_SECONDS = 240
# issue, attempts, verdicts, runner, merge sha (12 hex digits), title
ROW = re.compile(r"^\s*(\d+)\s+(\d+)\s+([a-z, ]+?)\s+(runner-\d)\s+([0-9a-f]{12})\s+\S")


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


def summary(out: str) -> dict[int, tuple[int, str, str, str]]:
    """issue -> (attempts, verdicts, runner, merge sha prefix)"""
    rows = {}
    for line in out.splitlines():
        match = ROW.match(line)
        if match:
            issue, attempts, verdicts, runner, sha = match.groups()
            rows[int(issue)] = (int(attempts), verdicts.strip(), runner, sha)
    return rows


def test_hive_demo_runs_the_whole_loop_and_merges_every_issue_into_main(
    tmp_path: Path, hive_pg_url: str
) -> None:
    try:
        done = demo(tmp_path, hive_pg_url)
        assert done.returncode == 0, done.stdout + done.stderr
        rows = summary(done.stdout)
        # the five sample issues, and the sixth that arrives unshaped and is shaped
        numbers = [*(sample.number for sample in ISSUES), SHAPED.number]
        assert sorted(rows) == numbers == [1, 2, 3, 4, 5, 6], done.stdout
        for issue, (attempts, verdicts, runner, _) in rows.items():
            assert runner in ("runner-1", "runner-2")
            if issue == 3:  # sent back once, accepted on its second attempt
                assert (attempts, verdicts) == (2, "sendback, accept"), done.stdout
            else:
                assert (attempts, verdicts) == (1, "accept"), done.stdout
        assert done.stdout.count("drained and exited 0") == 3

        # every merge is on the sample repository's main, as git itself reads it
        repo = tmp_path / "demo" / "repo"
        log = git("log", "--format=%H", "main", cwd=repo).split()
        for _, _, _, sha in rows.values():
            assert any(full.startswith(sha) for full in log), (sha, log)
        assert "def farewell" in git("show", "main:greet.py", cwd=repo)
        assert "farewell(name)" in git("show", "main:CHANGELOG.md", cwd=repo)
        git("fsck", "--strict", cwd=repo)
        assert "git log --oneline main (read with dulwich)" in done.stdout

        # a second run starts clean: the same six issues, merged once more
        again = demo(tmp_path, hive_pg_url)
        assert again.returncode == 0, again.stdout + again.stderr
        assert sorted(summary(again.stdout)) == numbers
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
    assert last.startswith("hive: demo: issues [") and "were not merged within 0.1 s" in last, last
    assert processes_under(tmp_path) == []


def test_the_fetch_line_never_prints_a_password() -> None:
    shown = shown_url("postgresql://hive:s3cret@db.example:5432/hive_demo")
    assert "s3cret" not in shown and "YOUR-PASSWORD" in shown
    assert shown_url("user=postgres dbname=hive_demo host=/tmp/x").endswith("host=/tmp/x")
