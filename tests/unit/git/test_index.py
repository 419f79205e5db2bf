from __future__ import annotations

import os
import struct
from pathlib import Path

import pytest
from dulwich.repo import Repo

from hive.git.index import read_index
from hive.git.repo import GitError
from hive.git.worktrees import cut_worktree

from .conftest import Git, write


def index_of(tree: Path) -> Path:
    return Path(Repo(str(tree)).index_path())


def test_an_index_git_wrote_round_trips_unchanged_for_git(
    clone: Repo, tmp_path: Path, git: Git
) -> None:
    cut = cut_worktree(clone, 1, "main", tmp_path / "work")
    write(cut.path, {"src/new.py": "n\n"})
    git("add", "src/new.py", cwd=cut.path)
    git("commit", "-qm", "by git", cwd=cut.path)  # writes a cached-tree extension
    staged = git("ls-files", "--stage", cwd=cut.path)

    read_index(index_of(cut.path)).write()

    assert git("ls-files", "--stage", cwd=cut.path) == staged
    assert git("status", "--porcelain", cwd=cut.path) == ""


def test_an_index_with_a_mandatory_extension_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "index"
    path.write_bytes(
        struct.pack(">4sLL", b"DIRC", 2, 0) + b"link" + struct.pack(">L", 0) + b"\0" * 20
    )
    with pytest.raises(GitError, match="split or sparse index"):
        read_index(path)


def test_an_index_of_version_4_is_refused(clone: Repo, tmp_path: Path, git: Git) -> None:
    cut = cut_worktree(clone, 1, "main", tmp_path / "work")
    git("update-index", "--index-version", "4", cwd=cut.path)
    with pytest.raises(GitError, match="index version 4 is not supported"):
        read_index(index_of(cut.path))


def test_a_racily_clean_file_is_read_again(clone: Repo, tmp_path: Path) -> None:
    """Same size, same mtime, same inode as the index says, but written in the instant the
    index was: only its content can tell, so it is hashed."""
    cut = cut_worktree(clone, 1, "main", tmp_path / "work")
    target = cut.path / "src" / "util.py"
    before = os.lstat(target).st_mtime_ns
    with open(target, "r+") as handle:
        handle.write("y")  # same size
    os.utime(target, ns=(before, before))
    os.utime(index_of(cut.path), ns=(before, before))

    assert cut_worktree(clone, 1, "main", tmp_path / "work").leftover == 1


def test_ignored_files_are_not_leftovers(clone: Repo, tmp_path: Path) -> None:
    cut = cut_worktree(clone, 1, "main", tmp_path / "work")
    write(cut.path, {".gitignore": "*.log\n", "run.log": "x", "src/deep.log": "y"})
    assert cut_worktree(clone, 1, "main", tmp_path / "work").leftover == 1
