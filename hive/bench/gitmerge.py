"""The merge step of `hive bench git` (the generated repository and `--repo`'s real
history): one clean three-way merge by the hive (`hive.git.merge`) against
`git merge-tree --write-tree` on the same two commits, side by side, the trees compared.

Each run merges a pair of commits of its own, made on the tip: the base side and the
head side each change `files_per_side` files of their own and one shared file on lines
far apart (its first and its last). New sides every run, so both write the merge's new
objects every time: a repeated `merge-tree` on the same two commits finds its trees
written already and writes nothing. The sides are written into the hive's clone and
fetched into git's.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from dulwich.object_store import commit_tree_changes, tree_lookup_path
from dulwich.objects import Blob, Commit, ObjectID
from dulwich.refs import Ref
from dulwich.repo import Repo

from hive.git.merge import Merged, merge
from hive.git.textmerge import is_text

FILES_PER_SIDE = 5


def mergeable_paths(repo: Repo, tip: ObjectID, paths: Sequence[bytes], want: int) -> list[bytes]:
    """Up to `want` of `paths` (regular files of `tip`) that are text of two lines or
    more: the shared file is edited at both ends, the others anywhere."""
    found: list[bytes] = []
    for path in paths:
        data = repo.object_store[_blob_of(repo, tip, path)].as_raw_string()
        if is_text(data) and data.count(b"\n") >= 2:
            found.append(path)
            if len(found) == want:
                break
    return found


def merge_step(
    repo: Repo,
    theirs: Path,
    git: Callable[..., str],
    tip: ObjectID,
    paths: Sequence[bytes],
    runs: int,
    files_per_side: int = FILES_PER_SIDE,
) -> dict[str, Any]:
    """`runs` merges on each side; `paths` (2 * files_per_side + 1 text files of `tip`
    at least, see `mergeable_paths`) are the files the sides change. The medians in ms
    and their ratio, hive / git."""
    if len(paths) < 2 * files_per_side + 1:
        raise ValueError(f"the merge step needs {2 * files_per_side + 1} text files")
    shared, own = paths[0], paths[1:]
    hive_times, git_times = [], []
    for n in range(runs):
        sides = {}
        for side, offset in (("base", 0), ("head", 1)):
            edits = {
                own[k * 2 + offset]: b"%s %d\n" % (side.encode(), n) for k in range(files_per_side)
            }
            lines = repo.object_store[_blob_of(repo, tip, shared)].as_raw_string()
            split = lines.splitlines(keepends=True)
            split[0 if side == "base" else -1] = b"%s edit %d\n" % (side.encode(), n)
            edits[shared] = b"".join(split)
            sides[side] = _commit_on(repo, tip, edits, f"{side} side {n}")
            repo.refs[Ref(b"refs/heads/bench-" + side.encode())] = sides[side]
        git(
            "fetch",
            "-q",
            "-f",
            str(repo.path),
            "bench-base:bench-base",
            "bench-head:bench-head",
            cwd=theirs,
        )
        started = time.perf_counter()
        done = merge(repo, sides["base"].decode(), sides["head"].decode(), f"bench {n}", n)
        hive_times.append(time.perf_counter() - started)
        assert isinstance(done, Merged) and not done.fast_forward
        started = time.perf_counter()
        tree = git("merge-tree", "--write-tree", "bench-base", "bench-head", cwd=theirs)
        git_times.append(time.perf_counter() - started)
        merged = repo.object_store[ObjectID(done.sha.encode())]
        assert isinstance(merged, Commit) and merged.tree.decode() == tree.split()[0]
    ours, theirs_ms = statistics.median(hive_times) * 1000, statistics.median(git_times) * 1000
    return {"merge_ms_hive": ours, "merge_ms_git": theirs_ms, "merge_ratio": ours / theirs_ms}


def _blob_of(repo: Repo, commit: ObjectID, path: bytes) -> ObjectID:
    store = repo.object_store
    top = store[commit]
    assert isinstance(top, Commit)
    return tree_lookup_path(store.__getitem__, top.tree, path)[1]


def _commit_on(repo: Repo, parent: ObjectID, files: dict[bytes, bytes], name: str) -> ObjectID:
    store = repo.object_store
    changes: list[tuple[bytes, int | None, ObjectID | None]] = []
    for path, data in files.items():
        blob = Blob.from_string(data)
        store.add_object(blob)
        changes.append((path, 0o100644, blob.id))
    top = store[parent]
    assert isinstance(top, Commit)
    commit = Commit()
    commit.tree = commit_tree_changes(store, top.tree, changes)
    commit.parents = [parent]
    commit.author = commit.committer = b"bench <bench@hive>"
    commit.author_time = commit.commit_time = 1_800_000_000
    commit.author_timezone = commit.commit_timezone = 0
    commit.message = f"{name}\n".encode()
    store.add_object(commit)
    return commit.id
