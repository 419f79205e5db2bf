"""`hive.git.scratch`: a commit's files written into a fresh directory, no `.git`, no
symlink leading out; removed even when a check left it read-only."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from dulwich.repo import Repo

from hive.git.repo import GitError
from hive.git.scratch import remove_scratch_tree, scratch_tree
from hive.testing import make_repo

from .building import EXEC, LINK, child


@pytest.fixture
def repo(tmp_path: Path) -> Iterator[Repo]:
    with Repo(str(make_repo(tmp_path / "repo", {"a.txt": "a\n", "src/app.py": "x\n"}))) as opened:
        yield opened


def test_the_commits_files_are_written_byte_for_byte_without_git(
    repo: Repo, tmp_path: Path
) -> None:
    sha = child(
        repo,
        repo.head().decode(),
        {
            "run.sh": (EXEC, b"#!/bin/sh\n"),
            "link": (LINK, b"src/app.py"),
            "bin": (0o100644, b"\0\r\n"),
        },
    )
    made = scratch_tree(repo, sha, tmp_path / "scratch" / "one")
    root = made.path
    assert made.files == 5 and made.flattened == ()
    assert sorted(str(p.relative_to(root)) for p in root.rglob("*")) == [
        "a.txt",
        "bin",
        "link",
        "run.sh",
        "src",
        "src/app.py",
    ]
    assert (root / "bin").read_bytes() == b"\0\r\n"
    assert os.access(root / "run.sh", os.X_OK) and not os.access(root / "a.txt", os.X_OK)
    assert os.readlink(root / "link") == "src/app.py" and (root / "link").read_text() == "x\n"
    assert not (root / ".git").exists()


def test_a_symlink_leading_out_is_written_as_a_plain_file(repo: Repo, tmp_path: Path) -> None:
    sha = child(
        repo,
        repo.head().decode(),
        {
            "abs": (LINK, b"/etc/passwd"),
            "up": (LINK, b"../.."),
            "d/e/root": (LINK, b"../.."),  # the tree's own root: inside
            "chain": (LINK, b"d/e/root/.."),  # through an inside link, then out
        },
    )
    made = scratch_tree(repo, sha, tmp_path / "scratch")
    assert made.flattened == ("abs", "chain", "up")
    assert (made.path / "abs").read_bytes() == b"/etc/passwd"
    assert not (made.path / "abs").is_symlink() and (made.path / "d/e/root").is_symlink()


def test_an_existing_directory_or_unknown_commit_is_refused(repo: Repo, tmp_path: Path) -> None:
    taken = tmp_path / "taken"
    taken.mkdir()
    with pytest.raises(GitError, match="exists"):
        scratch_tree(repo, repo.head().decode(), taken)
    with pytest.raises(GitError, match="no commit"):
        scratch_tree(repo, "1" * 40, tmp_path / "fresh")
    assert not (tmp_path / "fresh").exists()


def test_removal_takes_read_only_directories_and_never_follows_links(
    repo: Repo, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("keep\n")
    made = scratch_tree(repo, repo.head().decode(), tmp_path / "scratch")
    (made.path / "out").symlink_to(outside)  # a check made a link out
    os.chmod(made.path / "src", 0o500)
    os.chmod(made.path, 0o500)
    remove_scratch_tree(made.path)
    assert not made.path.exists()
    assert (outside / "keep.txt").read_text() == "keep\n"
    remove_scratch_tree(made.path)  # already gone: fine
