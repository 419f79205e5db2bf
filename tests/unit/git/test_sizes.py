"""`hive.git.sizes.object_size`: every object's size as `git cat-file -s` says, read
from its pack entry (whole or a delta, either kind of base) or from a loose object."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from dulwich.objects import Blob, ObjectID
from dulwich.repo import Repo

from hive.git.sizes import STREAM_MIN_BYTES, object_size, read_stream
from hive.git.storing import SMALL_PACKS_MAX, store_objects
from hive.testing import git, make_repo

from .building import child


@pytest.mark.parametrize("delta_base_offset", ["true", "false"])
def test_every_object_of_a_repacked_history_has_the_size_git_says(
    tmp_path: Path, delta_base_offset: str
) -> None:
    root = make_repo(tmp_path / "repo", {"long.txt": "".join(f"{n}\n" for n in range(5000))})
    with Repo(str(root)) as repo:
        sha = repo.head().decode()
        for n in range(6):
            text = "".join(f"{k}\n" for k in range(5000 + n * 100))
            sha = child(repo, sha, {"long.txt": text, f"f{n}.txt": "x\n" * n})
        repo.refs[b"refs/heads/main"] = ObjectID(sha.encode())
    git("-c", f"repack.useDeltaBaseOffset={delta_base_offset}", "repack", "-adq", cwd=root)
    listed = git("cat-file", "--batch-all-objects", "--batch-check", cwd=root).splitlines()
    stats = git("verify-pack", "-v", *map(str, root.glob(".git/objects/pack/*.idx")), cwd=root)
    assert " delta " in stats or "chain length" in stats  # some entries are deltas
    with Repo(str(root)) as repo:
        for line in listed:
            name, _kind, size = line.split()
            assert object_size(repo.object_store, name.encode()) == int(size), line


def test_a_loose_object_is_read_for_its_size(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    with Repo(str(root)) as repo:
        sha = child(repo, repo.head().decode(), {"b.txt": "bee\n" * 10})
        commit = repo.object_store[ObjectID(sha.encode())]
        tree = repo.object_store[commit.tree]  # type: ignore[attr-defined]
        blob = tree[b"b.txt"][1]
        assert object_size(repo.object_store, blob) == 40
        with pytest.raises(KeyError):
            object_size(repo.object_store, b"0" * 40)


@pytest.mark.parametrize("big", [False, True])
def test_a_pack_folded_away_by_another_reader_of_the_store_is_passed_over(
    tmp_path: Path, big: bool
) -> None:
    """`hive chaos --loop` (seed 27): a review's scratch tree read an object through a
    pack list taken before another thread folded the small packs, and failed with
    PackFileDisappeared; three such failures escalate work that was fine."""
    root = tmp_path / "r.git"
    Repo.init_bare(str(root), mkdir=True)
    size = 2 * STREAM_MIN_BYTES if big else 100
    body = os.urandom(size)
    first = Blob.from_string(body)
    with Repo(str(root)) as writer, Repo(str(root)) as reader:
        store_objects(writer.object_store, [first])
        for n in range(SMALL_PACKS_MAX - 2):
            store_objects(writer.object_store, [Blob.from_string(b"%d" % n)])
        assert len(reader.object_store.packs) == SMALL_PACKS_MAX - 1  # listed, not opened
        store_objects(writer.object_store, [Blob.from_string(b"the eighth: a fold")])
        assert len(list(root.glob("objects/pack/*.pack"))) == 1
        assert object_size(reader.object_store, first.id) == size
        kind, length, slices = read_stream(reader.object_store, first.id)
        assert (kind, length, b"".join(slices)) == (3, size, body)
