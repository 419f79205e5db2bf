from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

import pytest
from dulwich.refs import Ref
from dulwich.repo import Repo

from hive.bench import endings as bench_endings
from hive.bench import git as bench_git
from hive.bench.gitmerge import mergeable_paths
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


def test_bench_git_on_a_big_file_reports_each_step_with_its_peak_memory() -> None:
    parser = argparse.ArgumentParser()
    bench_git.add_arguments(parser)
    args = parser.parse_args(["--big-file", "1"])

    result = bench_git.run(args, Settings())

    assert result["big_file_mb"] == 1 and result["python_start_rss_mb"] > 0
    steps = ("salvage", "bundle", "import", "checkout", "merge", "salvage_rewrite")
    for step in (*steps, "bundle_rewrite"):
        assert result[f"{step}_ratio"] == result[f"{step}_s_hive"] / result[f"{step}_s_git"]
        assert result[f"{step}_rss_mb_hive"] > 0 and result[f"{step}_rss_mb_git"] > 0
        assert 0 < result[f"{step}_s_hive_in_process"] < result[f"{step}_s_hive"]
    # random bytes do not compress: each side's bundle carries the file whole, once a commit
    for step, files in (("bundle", 1), ("bundle_rewrite", 2)):
        assert files <= result[f"{step}_mb_hive"] < files * 1.05 + 0.01
        assert abs(result[f"{step}_mb_hive"] - result[f"{step}_mb_git"]) < 0.01


def test_bench_git_refuses_a_big_file_out_of_range() -> None:
    parser = argparse.ArgumentParser(exit_on_error=False)
    bench_git.add_arguments(parser)
    with pytest.raises(argparse.ArgumentError, match="is not a whole number from 1 to 4096"):
        parser.parse_args(["--big-file", "0"])


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
    upstream: Path, git: Callable[..., str]
) -> None:
    (upstream / "lib").mkdir()
    for n in range(12):
        (upstream / "lib" / f"m{n}.py").write_text(f"a = {n}\nb = {n}\nc = {n}\n")
    git("add", ".", cwd=upstream)
    git("commit", "-qm", "text files for the merge step", cwd=upstream)
    parser = argparse.ArgumentParser()
    bench_git.add_arguments(parser)
    args = parser.parse_args(["--repo", str(upstream), "--runs", "1", "--depth", "1"])

    result = bench_git.run(args, Settings())

    assert result["base"] == "main" and result["dulwich_not_compiled"] == "none"
    for step in ("clone_wire", "clone_local", "clone_shallow"):
        assert result[f"{step}_ratio"] == result[f"{step}_s_hive"] / result[f"{step}_s_git"]
        assert result[f"{step}_rss_mb_hive"] > 0 and result[f"{step}_rss_mb_git"] > 0
    assert result["clone_local_s_git_no_local"] > 0
    for step in ("cut", "salvage", "bundle", "import", "merge"):
        assert result[f"{step}_ratio"] == result[f"{step}_ms_hive"] / result[f"{step}_ms_git"]
    assert result["bundle_bytes_hive"] > 0 and result["bundle_bytes_git"] > 0


def test_the_merge_step_takes_text_files_of_two_lines_or_more(upstream: Path) -> None:
    with Repo(str(upstream)) as repo:
        tip = repo.refs[Ref(b"refs/heads/main")]
        paths = [b"README.md", b"docs/guide.md", b"src/app.py", b"src/util.py"]
        assert mergeable_paths(repo, tip, paths, 11) == [b"docs/guide.md", b"src/app.py"]
        assert mergeable_paths(repo, tip, paths, 1) == [b"docs/guide.md"]
