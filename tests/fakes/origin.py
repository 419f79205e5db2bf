"""A small bare repository with one commit on `main`, for the fake GitHub to serve."""

from __future__ import annotations

import time
from pathlib import Path

from dulwich.objects import Blob, Commit, Tree
from dulwich.repo import Repo

IDENTITY = b"Test <test@example.com>"


def commit_files(repo: Repo, files: dict[str, bytes], parents: list[bytes], message: str) -> bytes:
    """A commit of `files` (flat names) on `parents`; its sha (no ref moved)."""
    tree = Tree()
    for name, data in sorted(files.items()):
        blob = Blob.from_string(data)
        repo.object_store.add_object(blob)
        tree.add(name.encode(), 0o100644, blob.id)
    repo.object_store.add_object(tree)
    commit = Commit()
    commit.tree = tree.id
    commit.parents = parents
    commit.author = commit.committer = IDENTITY
    commit.author_time = commit.commit_time = int(time.time())
    commit.author_timezone = commit.commit_timezone = 0
    commit.encoding = b"UTF-8"
    commit.message = message.encode()
    repo.object_store.add_object(commit)
    return commit.id


def make_origin(path: Path, files: dict[str, bytes] | None = None) -> Path:
    """A bare repository at `path` whose `main` holds `files` (a README by default)."""
    path.mkdir(parents=True, exist_ok=True)
    with Repo.init_bare(str(path)) as repo:
        sha = commit_files(repo, files or {"README.md": b"# hello\n"}, [], "first\n")
        repo.refs[b"refs/heads/main"] = sha
        repo.refs.set_symbolic_ref(b"HEAD", b"refs/heads/main")
    return path
