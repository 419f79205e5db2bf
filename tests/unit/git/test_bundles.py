from __future__ import annotations

import os
import re
import subprocess
import time
from pathlib import Path

import pytest
from dulwich.repo import Repo

from hive.errors import HiveError
from hive.git.bundles import BundleTooLarge, bundle
from hive.git.repo import GitError
from hive.git.salvage import salvage
from hive.git.worktrees import Cut, cut_worktree

from .conftest import Git, head_of, write

MAX_BYTES = 100 * 1024 * 1024


@pytest.fixture
def worked(clone: Repo, tmp_path: Path) -> Cut:
    """queen-8 two commits beyond base: a new file, then a change to a large one."""
    cut = cut_worktree(clone, 8, "main", tmp_path / "work")
    write(cut.path, {"src/new.py": "z = 3\n"})
    salvage(cut.path, ["src"], "finished")
    write(cut.path, {"docs/guide.md": "guide\n" * 20 + "one more line\n"})
    salvage(cut.path, ["docs/guide.md"], "finished")
    return cut


def test_bundle_is_verified_and_fetched_by_git(
    clone: Repo, worked: Cut, tmp_path: Path, upstream: Path, git: Git
) -> None:
    out = bundle(clone, 8, "main", MAX_BYTES)
    assert out is not None
    assert out.commits == 2
    assert out.base_sha == head_of(git, upstream, "main")
    assert out.head_sha == head_of(git, worked.path, "HEAD")
    path = tmp_path / "queen-8.bundle"
    path.write_bytes(out.data)

    verified = git("bundle", "verify", str(path), cwd=upstream, check=False)
    assert "is okay" in verified
    git("fetch", "-q", str(path), "refs/heads/queen-8:refs/heads/got", cwd=upstream)
    assert head_of(git, upstream, "got") == out.head_sha
    git("fsck", "--strict", cwd=upstream)


def test_bundle_names_base_as_its_prerequisite(clone: Repo, worked: Cut, git: Git) -> None:
    out = bundle(clone, 8, "main", MAX_BYTES)
    assert out is not None
    header = out.data.split(b"\n\n", 1)[0].decode().splitlines()
    assert header == [
        "# v2 git bundle",
        f"-{out.base_sha} third",
        f"{out.head_sha} refs/heads/queen-8",
    ]


def test_a_changed_file_travels_as_a_delta(clone: Repo, worked: Cut) -> None:
    out = bundle(clone, 8, "main", MAX_BYTES)
    assert out is not None
    assert len(out.data) < 900  # the guide whole would be 141 bytes more per version


def test_no_bundle_when_the_branch_has_no_commit_beyond_base(clone: Repo, tmp_path: Path) -> None:
    cut_worktree(clone, 9, "main", tmp_path / "work")
    assert bundle(clone, 9, "main", MAX_BYTES) is None


def test_a_bundle_over_the_limit_is_refused_naming_the_limit_and_where_it_stopped(
    clone: Repo, worked: Cut
) -> None:
    size = len(bundle(clone, 8, "main", MAX_BYTES).data)  # type: ignore[union-attr]
    with pytest.raises(BundleTooLarge) as caught:
        bundle(clone, 8, "main", 100)
    assert isinstance(caught.value, HiveError)
    said = re.fullmatch(
        r"bundle of queen-8 is over the limit of 100 bytes \(HIVE_BUNDLE_MAX_BYTES\): "
        r"stopped at (\d+) bytes written",
        str(caught.value),
    )
    assert said is not None, str(caught.value)
    assert 100 < int(said.group(1)) <= size
    assert bundle(clone, 8, "main", size) is not None  # the limit itself is allowed
    with pytest.raises(BundleTooLarge):
        bundle(clone, 8, "main", size - 1)


def test_bundle_of_a_missing_branch_is_an_error(clone: Repo) -> None:
    with pytest.raises(GitError, match="has no branch queen-40"):
        bundle(clone, 40, "main", MAX_BYTES)


def test_bundle_after_base_moved_on_carries_only_the_branch(
    clone: Repo, worked: Cut, upstream: Path, tmp_path: Path, git: Git
) -> None:
    from hive.git.repo import refresh_base

    write(upstream, {"later.txt": "later\n"})
    git("add", ".", cwd=upstream)
    git("commit", "-qm", "later", cwd=upstream)
    refresh_base(clone, str(upstream), "main")

    out = bundle(clone, 8, "main", MAX_BYTES)

    assert out is not None and out.commits == 2
    path = tmp_path / "b.bundle"
    path.write_bytes(out.data)
    assert "is okay" in git("bundle", "verify", str(path), cwd=upstream, check=False)


def test_a_change_and_its_revert_bundle_without_a_delta_cycle(
    clone: Repo, tmp_path: Path, upstream: Path, git: Git
) -> None:
    cut = cut_worktree(clone, 6, "main", tmp_path / "work")
    original = (cut.path / "docs" / "guide.md").read_text()
    write(cut.path, {"docs/guide.md": original + "changed\n"})
    salvage(cut.path, ["docs"], "finished")
    write(cut.path, {"docs/guide.md": original})
    salvage(cut.path, ["docs"], "finished")
    out = bundle(clone, 6, "main", MAX_BYTES)
    assert out is not None
    path = tmp_path / "revert.bundle"
    path.write_bytes(out.data)
    git("fetch", "-q", str(path), "refs/heads/queen-6:refs/heads/got", cwd=upstream)
    git("fsck", "--strict", cwd=upstream)


def _base_with(upstream: Path, git: Git, clone: Repo, name: str, data: bytes) -> None:
    from hive.git.repo import refresh_base

    (upstream / name).write_bytes(data)
    git("add", name, cwd=upstream)
    git("commit", "-qm", f"add {name}", cwd=upstream)
    refresh_base(clone, str(upstream), "main")


def _fetched_by_git(out_data: bytes, upstream: Path, tmp_path: Path, git: Git) -> str:
    path = tmp_path / "got.bundle"
    path.write_bytes(out_data)
    assert "is okay" in git("bundle", "verify", str(path), cwd=upstream, check=False)
    git("fetch", "-q", str(path), "refs/heads/queen-5:refs/heads/got", cwd=upstream)
    git("fsck", "--strict", cwd=upstream)
    return head_of(git, upstream, "got")


def test_a_two_mib_random_rewrite_bundles_in_seconds_and_git_fetches_it(
    clone: Repo, tmp_path: Path, upstream: Path, git: Git
) -> None:
    _base_with(upstream, git, clone, "blob.bin", os.urandom(2 << 20))
    cut = cut_worktree(clone, 5, "main", tmp_path / "work")
    rewritten = os.urandom(2 << 20)
    (cut.path / "blob.bin").write_bytes(rewritten)
    salvage(cut.path, ["blob.bin"], "finished")
    # this thread's CPU time, not the clock's: a loaded machine stretches the
    # clock, never the work (the bound catches the quadratic path it replaced)
    started = time.thread_time()
    out = bundle(clone, 5, "main", MAX_BYTES)
    took = time.thread_time() - started
    assert out is not None
    assert took < 15.0  # dulwich's delta took about a minute here, holding the GIL
    assert len(out.data) < (2 << 20) + 4096  # random bytes travel whole, once
    assert _fetched_by_git(out.data, upstream, tmp_path, git) == out.head_sha
    shown = subprocess.run(
        ["/usr/bin/git", "cat-file", "blob", "got:blob.bin"],
        cwd=upstream,
        capture_output=True,
        check=True,
    )
    assert shown.stdout == rewritten


def test_an_edit_of_a_two_mib_text_travels_as_a_small_delta_git_applies(
    clone: Repo, tmp_path: Path, upstream: Path, git: Git
) -> None:
    lines = [f"line {i} of a long text\n" for i in range(90_000)]
    _base_with(upstream, git, clone, "long.txt", "".join(lines).encode())
    cut = cut_worktree(clone, 5, "main", tmp_path / "work")
    lines[45_000] = "edited\n"
    (cut.path / "long.txt").write_text("".join(lines))
    salvage(cut.path, ["long.txt"], "finished")
    out = bundle(clone, 5, "main", MAX_BYTES)
    assert out is not None and len(out.data) < 2000
    assert _fetched_by_git(out.data, upstream, tmp_path, git) == out.head_sha
    assert git("show", "got:long.txt", cwd=upstream) == "".join(lines)


def test_an_object_over_the_delta_limit_travels_whole(
    clone: Repo, worked: Cut, tmp_path: Path, upstream: Path, git: Git, monkeypatch
) -> None:
    import hive.git.bundles as bundles_module

    delta_sized = len(bundle(clone, 8, "main", MAX_BYTES).data)  # type: ignore[union-attr]
    monkeypatch.setattr(bundles_module, "DELTA_MAX_BYTES", 100)
    whole = bundle(clone, 8, "main", MAX_BYTES)
    assert whole is not None and len(whole.data) > delta_sized
    path = tmp_path / "whole.bundle"
    path.write_bytes(whole.data)
    git("fetch", "-q", str(path), "refs/heads/queen-8:refs/heads/got", cwd=upstream)
    git("fsck", "--strict", cwd=upstream)
