"""A repository on this machine is cloned by linking its packs and loose objects, as
git's local clone does: no pack is generated, git reads the result, and nothing outside
the source's own object files is taken."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from hive.git import local
from hive.git.repo import open_checkout

from .conftest import Git, head_of, write


def packs_of(objects: Path) -> dict[str, int]:
    """Pack file name -> inode."""
    pack_dir = objects / "pack"
    return {p.name: p.stat().st_ino for p in pack_dir.glob("pack-*.pack")}


def test_a_local_path_is_cloned_by_linking_its_packs(
    tmp_path: Path, upstream: Path, git: Git
) -> None:
    git("gc", "-q", cwd=upstream)
    write(upstream, {"loose.txt": "after the pack\n"})
    git("add", ".", cwd=upstream)
    git("commit", "-qm", "loose", cwd=upstream)

    checkout = open_checkout(str(upstream), tmp_path / "work", "main")

    clone = Path(checkout.repo.path)
    theirs, ours = packs_of(upstream / ".git" / "objects"), packs_of(clone / "objects")
    assert ours == theirs and len(ours) == 1  # the same files: linked, none generated
    assert checkout.base_sha == head_of(git, upstream, "main")
    git("fsck", "--strict", "--no-dangling", cwd=clone)
    # no multi-pack-index is ever written: dulwich is told not to look for one
    assert git("config", "core.multiPackIndex", cwd=clone).strip() == "false"
    assert git("log", "--format=%s", "origin/main", cwd=clone).split() == [
        "loose",
        "third",
        "second",
        "first",
    ]


def test_a_symlink_among_the_source_objects_is_not_followed(
    tmp_path: Path, upstream: Path, git: Git
) -> None:
    secret = tmp_path / "secret"
    secret.write_text("not yours\n")
    objects = upstream / ".git" / "objects"
    (objects / "pack").mkdir(exist_ok=True)
    (objects / "pack" / ("pack-" + "1" * 40 + ".pack")).symlink_to(secret)
    (objects / "pack" / ("pack-" + "1" * 40 + ".idx")).symlink_to(secret)
    (objects / "ab").mkdir(exist_ok=True)
    (objects / "ab" / ("c" * 38)).symlink_to(secret)
    (objects / "cd").symlink_to(tmp_path)
    (tmp_path / ("e" * 38)).write_text("not yours either\n")
    target = tmp_path / "target"
    target.mkdir()

    taken = local.link_objects(objects, target)

    loose = [p for p in objects.glob("??/*") if not p.is_symlink() and p.parent.name != "cd"]
    assert taken == len(loose) > 0
    assert not list((target / "pack").glob("pack-1111*"))
    assert not (target / "ab" / ("c" * 38)).exists()
    assert not (target / "cd").exists()


def test_a_source_with_alternates_is_fetched_not_linked(
    tmp_path: Path, upstream: Path, git: Git
) -> None:
    borrower = tmp_path / "borrower"
    git("clone", "-q", "--shared", str(upstream), str(borrower), cwd=tmp_path)
    write(borrower, {"own.txt": "own\n"})
    git("add", ".", cwd=borrower)
    git("commit", "-qm", "own", cwd=borrower)

    checkout = open_checkout(str(borrower), tmp_path / "work", "main")

    clone = Path(checkout.repo.path)
    assert not (clone / "objects" / "info" / "alternates").exists()
    git("fsck", "--strict", "--no-dangling", cwd=clone)
    assert checkout.base_sha == head_of(git, borrower, "main")


def test_a_pack_is_copied_when_it_cannot_be_linked(
    tmp_path: Path, upstream: Path, git: Git, monkeypatch: pytest.MonkeyPatch
) -> None:
    git("gc", "-q", cwd=upstream)

    def refuse(*args: object, **kwargs: object) -> None:
        raise OSError(errno.EXDEV, "Invalid cross-device link")

    monkeypatch.setattr(local.os, "link", refuse)
    checkout = open_checkout(str(upstream), tmp_path / "work", "main")

    clone = Path(checkout.repo.path)
    theirs, ours = packs_of(upstream / ".git" / "objects"), packs_of(clone / "objects")
    assert ours.keys() == theirs.keys() and ours != theirs  # same names, other inodes
    assert all(os.stat(clone / "objects" / "pack" / n).st_mode & 0o222 == 0 for n in ours)
    git("fsck", "--strict", "--no-dangling", cwd=clone)


def test_a_shallow_source_gives_a_clone_as_shallow(
    tmp_path: Path, upstream: Path, git: Git
) -> None:
    shallow = tmp_path / "shallow"
    git("clone", "-q", "--depth", "1", f"file://{upstream}", str(shallow), cwd=tmp_path)

    checkout = open_checkout(str(shallow), tmp_path / "work", "main")

    clone = Path(checkout.repo.path)
    git("fsck", "--strict", "--no-dangling", cwd=clone)
    assert checkout.base_sha == head_of(git, upstream, "main")
    assert (clone / "shallow").read_text() == (shallow / ".git" / "shallow").read_text()
    assert git("rev-list", "--count", "origin/main", cwd=clone).strip() == "1"


def test_a_branch_is_read_from_packed_refs_and_a_loose_ref_wins(upstream: Path, git: Git) -> None:
    git_dir = upstream / ".git"
    first = head_of(git, upstream, "main~1")
    for name in ("xmain", "main2", "feature/main"):
        git("branch", name, first, cwd=upstream)
    git("pack-refs", "--all", cwd=upstream)
    assert not (git_dir / "refs" / "heads" / "main").exists()

    assert local.read_branch(git_dir, b"refs/heads/main") == head_of(git, upstream, "main").encode()
    assert local.read_branch(git_dir, b"refs/heads/nope") is None

    git("update-ref", "refs/heads/main", first, cwd=upstream)  # loose now, packed stale
    assert local.read_branch(git_dir, b"refs/heads/main") == first.encode()


def test_a_symbolic_branch_is_left_to_dulwich_and_still_followed(
    tmp_path: Path, upstream: Path, git: Git
) -> None:
    git("symbolic-ref", "refs/heads/trunk", "refs/heads/main", cwd=upstream)
    assert local.read_branch(upstream / ".git", b"refs/heads/trunk") is None

    checkout = open_checkout(str(upstream), tmp_path / "work", "trunk")

    assert checkout.base_sha == head_of(git, upstream, "main")
