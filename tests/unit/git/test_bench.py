from __future__ import annotations

import argparse
from pathlib import Path

from hive.bench import endings as bench_endings
from hive.bench import git as bench_git
from hive.settings import Settings


def test_bench_git_reports_every_step_side_by_side() -> None:
    parser = argparse.ArgumentParser()
    bench_git.add_arguments(parser)
    args = parser.parse_args(["--files", "60", "--commits", "12", "--runs", "1"])

    result = bench_git.run(args, Settings())

    for step in ("cut", "salvage", "bundle", "import", "merge"):
        assert result[f"{step}_ms_hive"] > 0 and result[f"{step}_ms_git"] > 0
        assert result[f"{step}_ratio"] == result[f"{step}_ms_hive"] / result[f"{step}_ms_git"]
    assert result["bundle_bytes_hive"] > 0 and result["bundle_bytes_git"] > 0


def test_bench_endings_reports_n_at_once_against_one_alone() -> None:
    parser = argparse.ArgumentParser()
    bench_endings.add_arguments(parser)
    args = parser.parse_args(["--files", "40", "--commits", "3", "--endings", "3", "--runs", "1"])

    result = bench_endings.run(args, Settings())

    assert result["endings"] == 3
    assert result["one_ms"] > 0 and result["together_ms"] > 0 and result["shared_together_ms"] > 0
    assert result["together_ratio"] == result["together_ms"] / result["one_ms"]
    assert result["shared_ratio"] == result["shared_together_ms"] / result["one_ms"]


def test_bench_git_on_a_repository_reports_every_step_and_each_clones_memory(
    upstream: Path,
) -> None:
    parser = argparse.ArgumentParser()
    bench_git.add_arguments(parser)
    args = parser.parse_args(["--repo", str(upstream), "--runs", "1", "--depth", "1"])

    result = bench_git.run(args, Settings())

    assert result["base"] == "main" and result["dulwich_not_compiled"] == "none"
    for step in ("clone_wire", "clone_local", "clone_shallow"):
        assert result[f"{step}_ratio"] == result[f"{step}_s_hive"] / result[f"{step}_s_git"]
        assert result[f"{step}_rss_mb_hive"] > 0 and result[f"{step}_rss_mb_git"] > 0
    assert result["clone_local_s_git_no_local"] > 0
    for step in ("cut", "salvage", "bundle", "import"):
        assert result[f"{step}_ratio"] == result[f"{step}_ms_hive"] / result[f"{step}_ms_git"]
    assert result["bundle_bytes_hive"] > 0 and result["bundle_bytes_git"] > 0
