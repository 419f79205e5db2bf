"""The Queen's checkout kept flat: branches of retired issues deleted, packs that hold
what no ref reaches rewritten without it (never a pack younger than the grace), and the
git binary as the judge that nothing reachable went."""

from __future__ import annotations

import os
import time
from pathlib import Path

from dulwich.repo import Repo

from hive.git import housekeeping
from hive.git.salvage import salvage
from hive.git.worktrees import cut_worktree, remove_worktree

from .conftest import Git, write

HOUR_SECONDS = 3600.0


def work_on(clone: Repo, tmp_path: Path, issue: int) -> str:
    """A salvaged commit on queen-<issue>, its worktree removed; the commit's sha."""
    cut = cut_worktree(clone, issue, "main", tmp_path / "work")
    write(cut.path, {"src/app.py": os.urandom(4096).hex() + "\n"})
    sha = salvage(cut.path, ["src"], "finished").sha
    assert sha is not None
    remove_worktree(clone, cut.path)
    return sha


def age_packs(clone: Repo, seconds: float) -> None:
    for path in Path(clone.object_store.pack_dir).iterdir():
        then = time.time() - seconds
        os.utime(path, (then, then))


def test_deleted_branches_work_goes_at_the_repack_and_the_rest_stays_whole(
    tmp_path: Path, clone: Repo, git: Git
) -> None:
    kept, dropped = work_on(clone, tmp_path, 1), work_on(clone, tmp_path, 2)
    assert housekeeping.queen_branches(clone) == [1, 2]
    assert housekeeping.delete_branches(clone, [2, 3]) == [2]  # 3 has no branch
    age_packs(clone, 2 * HOUR_SECONDS)

    done = housekeeping.repack(clone)

    assert done.packs_rewritten >= 1 and done.objects_dropped >= 3  # commit, tree, blob
    assert done.bytes_after < done.bytes_before
    assert dropped.encode() not in clone.object_store
    assert kept.encode() in clone.object_store
    repo_dir = Path(clone.path)
    git("fsck", "--strict", "--no-dangling", cwd=repo_dir)
    assert git("rev-parse", "queen-1", cwd=repo_dir).strip() == kept
    assert git("cat-file", "-t", dropped, cwd=repo_dir, check=False).startswith("fatal")


def test_a_pack_younger_than_the_grace_keeps_even_what_nothing_reaches(
    tmp_path: Path, clone: Repo
) -> None:
    sha = work_on(clone, tmp_path, 1)
    housekeeping.delete_branches(clone, [1])
    done = housekeeping.repack(clone)
    assert not done and done.objects_dropped == 0
    assert sha.encode() in clone.object_store


def test_a_branch_checked_out_in_a_worktree_is_not_deleted(tmp_path: Path, clone: Repo) -> None:
    cut_worktree(clone, 5, "main", tmp_path / "work")
    assert housekeeping.delete_branches(clone, [5]) == []
    assert housekeeping.queen_branches(clone) == [5]


def test_a_repack_under_way_elsewhere_is_left_alone(tmp_path: Path, clone: Repo) -> None:
    work_on(clone, tmp_path, 1)
    housekeeping.delete_branches(clone, [1])
    age_packs(clone, 2 * HOUR_SECONDS)
    lock = Path(clone.object_store.pack_dir) / "hive-fold.lock"
    lock.touch()
    try:
        done = housekeeping.repack(clone)
    finally:
        lock.unlink()
    assert done.skipped and not done
