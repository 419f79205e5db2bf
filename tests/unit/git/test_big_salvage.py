"""A salvage of large files (issue 25, item 2): each is read, hashed and packed a slice at
a time, so memory stays a few megabytes whatever the file's size; git reads the result,
and a large file's pack is never folded (rewritten) again."""

from __future__ import annotations

import os
import subprocess
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pytest
from dulwich.objects import Blob
from dulwich.repo import Repo

from hive.git import storing
from hive.git.bundles import bundle
from hive.git.packfiles import pack_of_raw
from hive.git.packindex import land_bytes
from hive.git.salvage import salvage
from hive.git.scratch import scratch_tree
from hive.git.storing import FileChanged, store_files
from hive.git.worktrees import cut_worktree, remove_worktree

from .conftest import GIT, Git

LARGE = 16 << 20


def test_a_large_file_is_salvaged_in_a_few_megabytes_and_git_reads_it(
    clone: Repo, tmp_path: Path, git: Git
) -> None:
    cut = cut_worktree(clone, 3, "main", tmp_path / "work")
    data = os.urandom(LARGE // 2) * 2  # half compresses away: both zlib paths are taken
    (cut.path / "large.bin").write_bytes(data)
    (cut.path / "small.txt").write_text("small\n")
    tracemalloc.start()
    try:
        done = salvage(cut.path, ["large.bin", "small.txt"], "finished")
        _now, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert done.committed == ("large.bin", "small.txt")
    assert peak < 6 << 20, f"the salvage held {peak} bytes at its peak"
    repo_dir = Path(clone.path)
    git("fsck", "--strict", cwd=repo_dir)
    shown = subprocess.run(
        [GIT, "cat-file", "blob", "queen-3:large.bin"],
        cwd=repo_dir,
        capture_output=True,
        check=True,
    )
    assert shown.stdout == data
    assert git("status", "--porcelain", cwd=cut.path) == ""


def test_a_file_that_shrinks_while_it_is_stored_is_refused_and_leaves_no_pack(
    clone: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "file.bin"
    path.write_bytes(b"x" * 1000)
    real = os.fstat

    def larger(fd: int) -> os.stat_result:
        st = real(fd)
        return os.stat_result((st.st_mode, *st[1:6], st.st_size + 10, *st[7:]))

    before = sorted(Path(clone.object_store.pack_dir).iterdir())
    monkeypatch.setattr(storing.os, "fstat", larger)
    with pytest.raises(FileChanged, match="shrank while it was stored: 10 of 1010 bytes unread"):
        store_files(clone.object_store, [str(path)])
    assert sorted(Path(clone.object_store.pack_dir).iterdir()) == before


def test_a_large_pack_is_left_out_of_the_fold(
    clone: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pack_dir = Path(clone.object_store.pack_dir)
    before = set(pack_dir.glob("*.pack"))
    big = tmp_path / "big.bin"
    big.write_bytes(os.urandom(64 << 10))
    (sha,) = store_files(clone.object_store, [str(big)])
    (large,) = set(pack_dir.glob("*.pack")) - before
    monkeypatch.setattr(storing, "SMALL_PACK_BYTES", 32 << 10)
    monkeypatch.setattr(storing, "SMALL_PACKS_MAX", 2)
    for n in range(2):
        storing.store_objects(clone.object_store, [Blob.from_string(b"small %d\n" % n)])
    left = set(pack_dir.glob("*.pack"))
    assert large in left and len(left) == 2  # the large pack, and the fold of the rest
    assert clone.object_store[sha].as_raw_string() == big.read_bytes()


def test_a_highly_compressed_object_is_indexed_a_slice_at_a_time(clone: Repo) -> None:
    zeros = b"\0" * (32 << 20)  # 32 MiB that deflate to 32 KiB
    tracemalloc.start()
    try:
        land_bytes(clone.object_store, pack_of_raw([(3, zeros)]))
        _now, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 << 20, f"indexing held {peak} bytes at its peak"
    assert clone.object_store[Blob.from_string(zeros).id].as_raw_string() == zeros


def _traced_peak(run: Callable[[], object]) -> int:
    tracemalloc.start()
    try:
        run()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_large_file_is_checked_out_bundled_and_written_for_checks_a_slice_at_a_time(
    clone: Repo, tmp_path: Path, upstream: Path, git: Git
) -> None:
    cut = cut_worktree(clone, 4, "main", tmp_path / "work")
    data = os.urandom(LARGE)
    (cut.path / "large.bin").write_bytes(data)
    head = salvage(cut.path, ["large.bin"], "finished").sha
    assert head is not None
    remove_worktree(clone, cut.path)

    again: list[Path] = []
    peak = _traced_peak(
        lambda: again.append(cut_worktree(clone, 4, "main", tmp_path / "work").path)
    )
    assert peak < 6 << 20, f"the checkout held {peak} bytes at its peak"
    assert (again[0] / "large.bin").read_bytes() == data

    scratch = tmp_path / "scratch"
    peak = _traced_peak(lambda: scratch_tree(clone, head, scratch))
    assert peak < 6 << 20, f"the scratch tree held {peak} bytes at its peak"
    assert (scratch / "large.bin").read_bytes() == data

    made: list[bytes] = []
    peak = _traced_peak(lambda: made.append(bundle(clone, 4, "main", 1 << 30).data))  # type: ignore[union-attr]
    # its bytes, once: the slices went to a temporary file, read back whole at the end
    assert peak < 1.3 * LARGE, f"the bundle held {peak} bytes at its peak"
    path = tmp_path / "large.bundle"
    path.write_bytes(made[0])
    git("fetch", "-q", str(path), "refs/heads/queen-4:refs/heads/got", cwd=upstream)
    shown = subprocess.run(
        [GIT, "cat-file", "blob", "got:large.bin"], cwd=upstream, capture_output=True, check=True
    )
    assert shown.stdout == data
