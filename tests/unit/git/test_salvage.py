from __future__ import annotations

import os
from pathlib import Path

import pytest
from dulwich.repo import Repo

from hive.git import status
from hive.git.repo import GitError
from hive.git.safety import BoundaryError
from hive.git.salvage import salvage
from hive.git.worktrees import Cut, cut_worktree

from .conftest import Git, head_of, write


@pytest.fixture
def cut(clone: Repo, tmp_path: Path) -> Cut:
    return cut_worktree(clone, 21, "main", tmp_path / "work")


def changed_in(git: Git, tree: Path, rev: str = "HEAD") -> str:
    return git("show", "--name-status", "-M", "--format=%s", rev, cwd=tree)


def test_salvage_commits_boundary_changes_and_reports_the_rest(cut: Cut, git: Git) -> None:
    write(cut.path, {"src/app.py": "print(3)\n", "src/fresh.py": "new\n", "notes.txt": "out"})
    os.remove(cut.path / "src" / "util.py")
    write(cut.path, {"README.md": "outside too\n"})

    result = salvage(cut.path, ["src"], "finished")

    assert result.committed == ("src/app.py", "src/fresh.py", "src/util.py")
    assert result.outside == ("README.md", "notes.txt")
    assert result.over_cap == ()
    assert result.sha == head_of(git, cut.path, "refs/heads/queen-21")
    shown = changed_in(git, cut.path)
    assert shown.splitlines()[0] == "salvage (finished): 3 files left uncommitted on queen-21"
    assert "M\tsrc/app.py" in shown and "A\tsrc/fresh.py" in shown and "D\tsrc/util.py" in shown
    # the index agrees with the new commit: git sees only what was left
    assert sorted(git("status", "--porcelain", cwd=cut.path).splitlines()) == [
        " M README.md",
        "?? notes.txt",
    ]
    git("fsck", "--strict", cwd=cut.path)


def test_salvage_with_nothing_to_commit_returns_no_sha(cut: Cut, git: Git) -> None:
    write(cut.path, {"outside.txt": "x"})
    result = salvage(cut.path, ["src/app.py"], "reaped")
    assert (result.sha, result.committed, result.outside) == (None, (), ("outside.txt",))
    assert head_of(git, cut.path, "HEAD") == cut.head_sha


def test_salvage_keeps_a_rename_as_a_pair(cut: Cut, git: Git) -> None:
    os.rename(cut.path / "src" / "app.py", cut.path / "src" / "main.py")
    result = salvage(cut.path, ["src/app.py", "src/main.py"], "handed back")
    assert result.committed == ("src/app.py", "src/main.py")
    assert "R100\tsrc/app.py\tsrc/main.py" in changed_in(git, cut.path)
    assert "handed back" in changed_in(git, cut.path)


def test_a_rename_half_outside_the_boundary_stays_whole_outside(cut: Cut) -> None:
    os.rename(cut.path / "src" / "app.py", cut.path / "moved.py")
    result = salvage(cut.path, ["src"], "finished")
    assert (result.sha, result.outside) == (None, ("moved.py", "src/app.py"))


def test_salvage_caps_paths_in_sorted_order(cut: Cut, git: Git) -> None:
    write(cut.path, {f"gen/f{n:03}.txt": f"{n}\n" for n in range(7)})
    result = salvage(cut.path, ["gen"], "finished", max_paths=5)
    assert result.committed == tuple(f"gen/f{n:03}.txt" for n in range(5))
    assert result.over_cap == ("gen/f005.txt", "gen/f006.txt")
    assert git("status", "--porcelain", cwd=cut.path).split() == [
        "??",
        "gen/f005.txt",
        "??",
        "gen/f006.txt",
    ]


def test_the_cap_never_splits_a_rename(cut: Cut) -> None:
    os.rename(cut.path / "src" / "app.py", cut.path / "src" / "b.py")
    write(cut.path, {"src/a.py": "a\n", "src/c.py": "c\n"})
    result = salvage(cut.path, ["src"], "finished", max_paths=2)
    assert result.committed == ("src/a.py",)
    # c.py would fit, but what is committed is always a sorted prefix
    assert result.over_cap == ("src/app.py", "src/b.py", "src/c.py")


def test_salvage_commits_work_staged_but_not_committed(cut: Cut, git: Git) -> None:
    write(cut.path, {"src/util.py": "x = 2\n"})
    git("add", "src/util.py", cwd=cut.path)
    result = salvage(cut.path, ["src/util.py"], "finished")
    assert result.committed == ("src/util.py",)
    assert git("show", "HEAD:src/util.py", cwd=cut.path) == "x = 2\n"
    assert git("status", "--porcelain", cwd=cut.path) == ""


def test_salvage_keeps_the_executable_bit_and_symlinks(cut: Cut, git: Git) -> None:
    write(cut.path, {"src/run.sh": "#!/bin/sh\n"})
    os.chmod(cut.path / "src" / "run.sh", 0o755)
    os.symlink("app.py", cut.path / "src" / "alias.py")
    salvage(cut.path, ["src"], "finished")
    tree = git("ls-tree", "HEAD", "src/", cwd=cut.path)
    assert "100755 blob" in tree.split("src/run.sh")[0].splitlines()[-1]
    assert "120000 blob" in tree.split("src/alias.py")[0].splitlines()[-1]
    assert git("status", "--porcelain", cwd=cut.path) == ""


def test_salvage_refuses_an_unknown_reason(cut: Cut) -> None:
    with pytest.raises(GitError, match="'done' is not one of finished, reaped, handed back"):
        salvage(cut.path, ["src"], "done")


def test_salvage_refuses_a_boundary_that_climbs_out(cut: Cut) -> None:
    with pytest.raises(BoundaryError, match="climbs out"):
        salvage(cut.path, ["src/../../etc/passwd"], "finished")


def test_salvage_twice_commits_once(cut: Cut) -> None:
    write(cut.path, {"src/app.py": "print(9)\n"})
    assert salvage(cut.path, ["src"], "finished").sha is not None
    assert salvage(cut.path, ["src"], "finished").sha is None


def test_the_flat_tree_a_salvage_remembers_is_the_tree_it_committed(
    cut: Cut, clone: Repo, git: Git
) -> None:
    os.remove(cut.path / "src" / "util.py")
    os.mkdir(cut.path / "src" / "util.py")  # a file becomes a directory
    write(cut.path, {"src/util.py/inner.py": "x\n", "src/new/deep/a.py": "a\n"})
    os.remove(cut.path / "src" / "app.py")
    os.symlink("new/deep/a.py", cut.path / "src" / "app.py")  # a file becomes a link
    os.remove(cut.path / "docs" / "guide.md")  # a directory goes away whole

    result = salvage(cut.path, ["src", "docs"], "finished")

    assert result.sha is not None
    tree = clone[result.sha.encode()].tree  # type: ignore[attr-defined]
    remembered = status._FLAT[tree]
    status._FLAT.clear()
    assert remembered == status.flatten(clone, tree)
    write(cut.path, {"src/new/deep/a.py": "b\n"})
    assert salvage(cut.path, ["src"], "finished").committed == ("src/new/deep/a.py",)
    assert git("status", "--porcelain", cwd=cut.path) == ""
