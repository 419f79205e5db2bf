"""A base refresh from a repository on this machine copies what the new tip needs and
nothing else, walking from the tip to what the clone holds; a source it cannot copy
from that way (a missing object, a damaged one, a long way behind) is fetched the
ordinary way. The git binary judges the clone after each (`fsck`, `rev-list`)."""

from __future__ import annotations

import os
import zlib
from pathlib import Path

import pytest
from dulwich.objects import ObjectID
from dulwich.repo import Repo

import hive.git.localcopy as localcopy
from hive.git.localcopy import lacking
from hive.git.repo import open_checkout, refresh_base

from .conftest import Git, head_of, write


def _commit(git: Git, root: Path, files: dict[str, str], message: str) -> str:
    write(root, files)
    git("add", ".", cwd=root)
    git("commit", "-qm", message, cwd=root)
    return head_of(git, root, "main")


def _objects(git: Git, repo: Path, *revs: str) -> set[str]:
    listed = git("rev-list", "--objects", *revs, cwd=repo)
    return {line.split()[0] for line in listed.splitlines()}


def test_a_moved_base_is_copied_alone_and_the_clone_is_whole(
    tmp_path: Path, upstream: Path, git: Git
) -> None:
    checkout = open_checkout(str(upstream), tmp_path / "work", "main")
    old = checkout.base_sha
    _commit(git, upstream, {"src/app.py": "print(3)\n", "new/dir/file.txt": "new\n"}, "fourth")
    tip = _commit(git, upstream, {"README.md": "hello again\n"}, "fifth")
    clone = Path(checkout.repo.path)
    before = set((clone / "objects" / "pack").glob("*.pack"))

    assert refresh_base(checkout.repo, str(upstream), "main") == tip

    landed = set((clone / "objects" / "pack").glob("*.pack")) - before
    assert len(landed) == 1  # one pack of what the two commits brought
    with Repo(str(clone)) as opened:
        pack = next(p for p in opened.object_store.packs if p._basename in str(landed.pop()))
        copied = {sha.decode() for sha in pack}
    assert copied == _objects(git, upstream, tip, f"^{old}")
    git("fsck", "--strict", "--no-dangling", cwd=clone)
    assert head_of(git, clone, "refs/remotes/origin/main") == tip
    checkout.repo.close()


def test_the_walk_stops_at_what_the_clone_holds() -> None:
    store: dict[ObjectID, tuple[int, bytes]] = {}

    def put(type_num: int, raw: bytes) -> ObjectID:
        from dulwich.objects import ShaFile

        obj = ShaFile.from_raw_string(type_num, raw)
        store[obj.id] = (type_num, raw)
        return obj.id

    blob = put(3, b"kept\n")
    sub = put(2, b"100644 kept.txt\0" + bytes.fromhex(blob.decode()))
    root = put(2, b"40000 sub\0" + bytes.fromhex(sub.decode()))
    held = {sub, blob}
    reads: list[ObjectID] = []

    def read(sha: ObjectID) -> tuple[int, bytes]:
        reads.append(sha)
        return store[sha]

    found = lacking(read, held.__contains__, root)
    assert found is not None
    assert [bytes.hex(sha) for sha, _, _ in found] == [root.decode()]
    assert reads == [root]  # the subtree held is not opened


def test_a_source_missing_an_object_is_fetched_the_ordinary_way(
    tmp_path: Path, upstream: Path, git: Git
) -> None:
    checkout = open_checkout(str(upstream), tmp_path / "work", "main")
    tip = _commit(git, upstream, {"later.txt": "later\n"}, "later")
    blob = git("rev-parse", f"{tip}:later.txt", cwd=upstream).strip()
    loose = upstream / ".git" / "objects" / blob[:2] / blob[2:]
    moved = tmp_path / "aside"
    os.rename(loose, moved)  # the walk cannot read it from the source's store

    with Repo(str(upstream)) as source:
        found = lacking(
            source.object_store.get_raw,
            checkout.repo.object_store.__contains__,
            ObjectID(tip.encode()),
        )
    assert found is None
    os.rename(moved, loose)
    assert refresh_base(checkout.repo, str(upstream), "main") == tip
    git("fsck", "--strict", cwd=Path(checkout.repo.path))
    checkout.repo.close()


def test_an_object_that_does_not_match_its_name_is_not_copied(
    tmp_path: Path, upstream: Path, git: Git
) -> None:
    checkout = open_checkout(str(upstream), tmp_path / "work", "main")
    tip = _commit(git, upstream, {"later.txt": "later\n"}, "later")
    blob = git("rev-parse", f"{tip}:later.txt", cwd=upstream).strip()
    loose = upstream / ".git" / "objects" / blob[:2] / blob[2:]
    os.chmod(loose, 0o644)
    loose.write_bytes(zlib.compress(b"blob 6\0forged"))

    with Repo(str(upstream)) as source:
        found = lacking(
            source.object_store.get_raw,
            checkout.repo.object_store.__contains__,
            ObjectID(tip.encode()),
        )
    assert found is None
    checkout.repo.close()


def test_a_walk_past_its_bound_is_fetched_the_ordinary_way(
    tmp_path: Path, upstream: Path, git: Git, monkeypatch: pytest.MonkeyPatch
) -> None:
    checkout = open_checkout(str(upstream), tmp_path / "work", "main")
    tip = _commit(git, upstream, {f"many/f{n}.txt": f"{n}\n" for n in range(5)}, "many")
    monkeypatch.setattr(localcopy, "COPY_OBJECTS_MAX", 3)
    with Repo(str(upstream)) as source:
        found = lacking(
            source.object_store.get_raw,
            checkout.repo.object_store.__contains__,
            ObjectID(tip.encode()),
        )
    assert found is None

    assert refresh_base(checkout.repo, str(upstream), "main") == tip
    git("fsck", "--strict", cwd=Path(checkout.repo.path))
    checkout.repo.close()


def test_a_submodule_entry_is_not_followed(tmp_path: Path, upstream: Path, git: Git) -> None:
    checkout = open_checkout(str(upstream), tmp_path / "work", "main")
    elsewhere = "1" * 40  # a commit of another repository, not here nor there
    git("update-index", "--add", "--cacheinfo", f"160000,{elsewhere},vendor/lib", cwd=upstream)
    git("commit", "-qm", "a submodule", cwd=upstream)
    tip = head_of(git, upstream, "main")

    with Repo(str(upstream)) as source:
        found = lacking(
            source.object_store.get_raw,
            checkout.repo.object_store.__contains__,
            ObjectID(tip.encode()),
        )
    assert found is not None
    assert elsewhere not in {sha.hex() for sha, _, _ in found}
    assert refresh_base(checkout.repo, str(upstream), "main") == tip
    checkout.repo.close()


def test_each_object_comes_after_every_object_it_reaches(
    tmp_path: Path, upstream: Path, git: Git
) -> None:
    checkout = open_checkout(str(upstream), tmp_path / "work", "main")
    same = "the same text in two places\n"  # one blob that two new trees name
    files = {"a/b/c/one.txt": same, "a/b/d/two.txt": same, "a/e.txt": "e\n", "z.txt": "z\n"}
    _commit(git, upstream, files, "nested")
    tip = _commit(git, upstream, {"a/b/c/three.txt": "three\n"}, "deeper")

    with Repo(str(upstream)) as source:
        found = lacking(
            source.object_store.get_raw,
            checkout.repo.object_store.__contains__,
            ObjectID(tip.encode()),
        )
    assert found is not None
    at = {sha.hex(): n for n, (sha, _, _) in enumerate(found)}
    for sha, type_num, raw in found:
        named = localcopy._reaches(ObjectID(sha.hex().encode()), type_num, raw)
        assert all(at[n.decode()] < at[sha.hex()] for n in named if n.decode() in at)
    assert found[-1][0].hex() == tip
    checkout.repo.close()
