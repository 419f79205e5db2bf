"""A clone's small packs (one per salvage, merge or import) are folded into one once
there are SMALL_PACKS_MAX of them, and git reads every object afterwards."""

from __future__ import annotations

import os
from pathlib import Path

from dulwich.objects import Blob
from dulwich.repo import Repo

from hive.git import storing
from hive.git.salvage import salvage
from hive.git.worktrees import cut_worktree

from .conftest import Git, write


def packs(repo: Repo) -> list[Path]:
    return sorted(Path(repo.object_store.pack_dir).glob("*.pack"))


def salvages(clone: Repo, tmp_path: Path, count: int) -> Path:
    cut = cut_worktree(clone, 1, "main", tmp_path / "work")
    for n in range(count):
        write(cut.path, {"src/app.py": f"print({n})\n"})
        assert salvage(cut.path, ["src"], "finished").sha is not None
    return cut.path


def test_small_packs_are_folded_into_one_that_git_reads(
    tmp_path: Path, clone: Repo, git: Git
) -> None:
    salvages(clone, tmp_path, storing.SMALL_PACKS_MAX - 1)
    assert len(packs(clone)) == storing.SMALL_PACKS_MAX - 1

    worktree = salvages(clone, tmp_path, 1)

    assert len(packs(clone)) == 1
    repo_dir = Path(clone.path)
    git("fsck", "--strict", "--no-dangling", cwd=repo_dir)
    log = git("log", "--format=%s", "origin/main..queen-1", cwd=repo_dir).splitlines()
    assert len(log) == storing.SMALL_PACKS_MAX
    assert git("status", "--porcelain", cwd=worktree) == ""


def test_a_fold_under_way_elsewhere_is_left_alone_and_a_stale_one_is_taken_over(
    tmp_path: Path, clone: Repo
) -> None:
    lock = Path(clone.object_store.pack_dir) / "hive-fold.lock"
    Path(clone.object_store.pack_dir).mkdir(parents=True, exist_ok=True)
    lock.touch()
    salvages(clone, tmp_path, storing.SMALL_PACKS_MAX)
    assert len(packs(clone)) == storing.SMALL_PACKS_MAX  # another process holds the fold

    old = lock.stat().st_mtime - storing.STALE_LOCK_SECONDS - 1
    os.utime(lock, (old, old))

    assert storing.fold_small_packs(clone.object_store) == storing.SMALL_PACKS_MAX
    assert len(packs(clone)) == 1 and not lock.exists()


def test_a_fold_that_comes_out_as_a_pack_it_read_keeps_that_pack(clone: Repo, git: Git) -> None:
    # one pack holds every object the other small packs hold, in id order as a fold
    # writes them (an earlier fold's, the others landed again since): the fold reads it
    # first and comes out as it, byte for byte
    made = [Blob.from_string(b"blob %d\n" % n) for n in range(storing.SMALL_PACKS_MAX)]
    blobs = sorted(made, key=lambda blob: blob.id)
    storing.store_objects(clone.object_store, blobs)
    for blob in blobs[1:]:
        storing.store_objects(clone.object_store, [blob])
    assert len(packs(clone)) == 1
    fresh = Repo(clone.path)
    assert all(blob.id in fresh.object_store for blob in blobs)
    for blob in blobs:
        assert git("cat-file", "-p", blob.id.decode(), cwd=Path(clone.path)) == blob.data.decode()


def test_the_hives_own_objects_land_as_a_pack_and_index_git_verifies(clone: Repo, git: Git) -> None:
    blobs = [Blob.from_string(b"own %d\n" % n * (n + 1)) for n in range(3)]
    before = set(packs(clone))
    storing.store_objects(clone.object_store, blobs)
    (landed,) = set(packs(clone)) - before
    git("verify-pack", "-v", str(landed.with_suffix(".idx")), cwd=Path(clone.path))
    for blob in blobs:
        assert git("cat-file", "-p", blob.id.decode(), cwd=Path(clone.path)) == blob.data.decode()
    assert all(blob.id in Repo(clone.path).object_store for blob in blobs)


def test_a_pack_list_read_before_another_thread_folded_is_passed_over(tmp_path: Path) -> None:
    """`hive chaos --loop` (seed 27, the big run): two threads of the Queen landed packs
    at once; one listed the packs, the other folded them, and the first's fold check
    read a pack gone meanwhile: PackFileDisappeared, a review that could not run."""
    root = tmp_path / "r.git"
    Repo.init_bare(str(root), mkdir=True)
    with Repo(str(root)) as writer, Repo(str(root)) as reader:
        for n in range(storing.SMALL_PACKS_MAX - 1):
            storing.store_objects(writer.object_store, [Blob.from_string(b"%d" % n)])
        stale = list(reader.object_store.packs)  # listed, their indexes not opened yet
        storing.store_objects(writer.object_store, [Blob.from_string(b"the eighth: a fold")])
        assert storing.small_packs(stale) == []  # every one of them folded away
        assert len(storing.small_packs(reader.object_store.packs)) == 1
        assert storing.fold_small_packs(reader.object_store) == 0
