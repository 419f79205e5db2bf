"""Commits built straight from objects with dulwich, for the merge and push tests: a
child of any commit with some paths set or removed, no worktree involved."""

from __future__ import annotations

from collections.abc import Mapping

from dulwich.object_store import commit_tree_changes
from dulwich.objects import Blob, Commit, ObjectID
from dulwich.repo import Repo

FILE = 0o100644
EXEC = 0o100755
LINK = 0o120000
AUTHOR = b"Bee <bee@hive.invalid>"

# path -> text (a file), (mode, bytes), or None (removed)
Changes = Mapping[str, str | tuple[int, bytes] | None]


def child(repo: Repo, parent: str, changes: Changes, message: str = "change", at: int = 1) -> str:
    """A commit on `parent` with `changes` applied; its sha (no ref moved)."""
    store = repo.object_store
    base = store[ObjectID(parent.encode())]
    assert isinstance(base, Commit)
    edits: list[tuple[bytes, int | None, ObjectID | None]] = []
    for path, value in changes.items():
        if value is None:
            edits.append((path.encode(), None, None))
            continue
        mode, data = (FILE, value.encode()) if isinstance(value, str) else value
        blob = Blob.from_string(data)
        store.add_object(blob)
        edits.append((path.encode(), mode, blob.id))
    commit = Commit()
    commit.tree = commit_tree_changes(store, base.tree, edits)
    commit.parents = [base.id]
    commit.author = commit.committer = AUTHOR
    commit.author_time = commit.commit_time = at
    commit.author_timezone = commit.commit_timezone = 0
    commit.message = message.encode() + b"\n"
    store.add_object(commit)
    return commit.id.decode()


def files_of(repo: Repo, sha: str) -> dict[str, bytes]:
    """Every blob of commit `sha`, path -> content."""
    store = repo.object_store
    commit = store[ObjectID(sha.encode())]
    assert isinstance(commit, Commit)
    out = {}
    for entry in store.iter_tree_contents(commit.tree):
        assert entry.path is not None and entry.sha is not None
        out[entry.path.decode()] = store[entry.sha].as_raw_string()
    return out
