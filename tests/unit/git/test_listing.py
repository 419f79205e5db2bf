from __future__ import annotations

from pathlib import Path

from dulwich.repo import Repo

from hive.git.listing import list_branches
from hive.git.salvage import salvage
from hive.git.worktrees import cut_worktree

from .conftest import Git, write


def test_lists_queen_branches_ahead_of_base_as_git_counts_them(
    clone: Repo, tmp_path: Path, git: Git
) -> None:
    ahead = cut_worktree(clone, 11, "main", tmp_path / "work")
    write(ahead.path, {"src/app.py": "a\n", "src/more.py": "m\n"})
    salvage(ahead.path, ["src/app.py"], "finished")
    salvage(ahead.path, ["src/more.py"], "finished")
    cut_worktree(clone, 2, "main", tmp_path / "work")  # nothing beyond base
    repo_dir = Path(clone.path)

    [info] = list_branches(clone, "main")

    assert (info.issue, info.branch) == (11, "queen-11")
    assert info.head_sha == git("rev-parse", "queen-11", cwd=repo_dir).strip()
    assert (
        str(info.commits)
        == git("rev-list", "--count", "origin/main..queen-11", cwd=repo_dir).strip()
    )
    assert info.changed_files == tuple(
        git("diff", "--name-only", "origin/main...queen-11", cwd=repo_dir).split()
    )


def test_changed_files_ignore_what_base_did_after_the_branch_left(
    clone: Repo, tmp_path: Path, upstream: Path, git: Git
) -> None:
    from hive.git.repo import refresh_base

    cut = cut_worktree(clone, 5, "main", tmp_path / "work")
    write(cut.path, {"README.md": "bee\n"})
    salvage(cut.path, ["README.md"], "finished")
    write(upstream, {"docs/guide.md": "moved on\n"})
    git("commit", "-qam", "base moves", cwd=upstream)
    refresh_base(clone, str(upstream), "main")

    [info] = list_branches(clone, "main")

    assert (info.commits, info.changed_files) == (1, ("README.md",))
