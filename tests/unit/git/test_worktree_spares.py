"""A runner's worktree parked after its turn is the next cut's: brought to the new commit
by the trees' change, verified against what the cut wrote, and then what git's checkout
of that commit is (the git binary finds nothing to report), whatever the bee left."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from dulwich.objects import ObjectID
from dulwich.refs import Ref
from dulwich.repo import Repo

from hive.git import worktrees
from hive.git.worktrees import SPARE_DIRNAME, cut_worktree, list_worktrees, park_worktree

from .building import EXEC, LINK, child
from .conftest import Git


def _branch(clone: Repo, issue: int, changes: dict[str, str | tuple[int, bytes] | None]) -> str:
    base = clone.refs[Ref(b"refs/remotes/origin/main")].decode()
    sha = child(clone, base, changes)
    clone.refs[Ref(f"refs/heads/queen-{issue}".encode())] = ObjectID(sha.encode())
    return sha


def _spares(work: Path) -> list[str]:
    spare = work / SPARE_DIRNAME
    return os.listdir(spare) if spare.exists() else []


def _clean(git: Git, path: Path) -> str:
    """What git says differs from HEAD, untracked and ignored files included."""
    return git("status", "--porcelain", "--ignored", "--untracked-files=all", cwd=path)


def test_a_parked_worktree_is_the_next_cut_and_git_finds_it_clean(
    clone: Repo, tmp_path: Path, git: Git
) -> None:
    work = tmp_path / "work"
    _branch(clone, 1, {"run.sh": (EXEC, b"#!/bin/sh\n"), "out": (LINK, b"/etc/passwd")})
    first = cut_worktree(clone, 1, "main", work)
    inode = os.lstat(first.path / "README.md").st_ino
    # the bee's turn: a change, an untracked file, an ignored one, a mode, its .git
    (first.path / "src" / "app.py").write_text("the bee's\n")
    (first.path / "notes.txt").write_text("left\n")
    (first.path / "build").mkdir()
    (first.path / "build" / "x.o").write_bytes(b"\0")
    os.chmod(first.path / "run.sh", 0o644)
    park_worktree(clone, first.path)
    assert not first.path.exists() and list_worktrees(clone) == []
    assert len(_spares(work)) == 1

    _branch(clone, 2, {"src/app.py": None, "src/main.py": "main\n", "out": (LINK, b"src")})
    second = cut_worktree(clone, 2, "main", work)

    assert _spares(work) == []
    assert os.lstat(second.path / "README.md").st_ino == inode  # kept, not written again
    assert _clean(git, second.path) == ""
    assert os.readlink(second.path / "out") == "src"  # a bee's symlinks are not flattened
    listed = git("worktree", "list", "--porcelain", cwd=Path(clone.path))
    assert f"worktree {second.path}\nHEAD {second.head_sha}\nbranch refs/heads/queen-2" in listed
    (second.path / "src" / "main.py").write_text("changed\n")
    assert _clean(git, second.path) == " M src/main.py\n"  # its index is the stat cache


def test_a_bees_git_file_or_directory_does_not_survive_the_park(
    clone: Repo, tmp_path: Path, git: Git
) -> None:
    work = tmp_path / "work"
    first = cut_worktree(clone, 3, "main", work)
    (first.path / ".git").unlink()
    (first.path / ".git").mkdir()  # a repository of the bee's own
    (first.path / ".git" / "config").write_text("[core]\n\thooksPath = /tmp\n")
    park_worktree(clone, first.path)
    second = cut_worktree(clone, 4, "main", work)
    assert (second.path / ".git").is_file()
    assert _clean(git, second.path) == ""


def test_spares_an_earlier_process_left_are_removed_and_past_the_cap_one_is_deleted(
    clone: Repo, tmp_path: Path, git: Git, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = tmp_path / "work"
    leftover = work / SPARE_DIRNAME / "old"
    leftover.mkdir(parents=True)
    (leftover / "file").write_text("an earlier process's\n")
    cut = cut_worktree(clone, 5, "main", work)
    assert not leftover.exists()
    monkeypatch.setattr(worktrees, "SPARES_MAX", 0)
    park_worktree(clone, cut.path)
    assert not cut.path.exists() and _spares(work) == []
    assert _clean(git, cut_worktree(clone, 6, "main", work).path) == ""


def test_a_worktree_this_process_did_not_cut_is_deleted_not_parked(
    clone: Repo, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    cut = cut_worktree(clone, 7, "main", work)
    worktrees.remove_worktree(clone, cut.path)
    assert cut.path not in worktrees._CUT
    cut = cut_worktree(clone, 7, "main", work)
    worktrees._CUT.pop(cut.path)  # as if an earlier process had cut it
    park_worktree(clone, cut.path)
    assert not cut.path.exists() and list_worktrees(clone) == []
    assert _spares(work) == []
