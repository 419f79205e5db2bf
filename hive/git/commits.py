"""Commits made from a worktree's index (the demo agent's change, a sample repository),
as a named author, with no hook run and nothing signed: whatever the repository's
config or hooks directory says, making the commit starts no program."""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path

from dulwich.objects import Commit, ObjectID
from dulwich.refs import Ref
from dulwich.repo import Repo


def commit_staged(repo: Repo, message: str, author: bytes, *, at: int | None = None) -> str:
    """Commit what is staged in `repo`'s worktree on HEAD's branch, by `author` (also the
    committer), at `at` (seconds since the epoch, UTC; default now, local zone); the
    commit's sha."""
    repo.hooks.clear()  # no_verify skips pre-commit and commit-msg; this, post-commit too
    zone = None if at is None else 0
    sha = repo.get_worktree().commit(
        message=message.encode("utf-8"),
        author=author,
        committer=author,
        author_timestamp=at,
        commit_timestamp=at,
        author_timezone=zone,
        commit_timezone=zone,
        no_verify=True,
        sign=False,
        signoff=False,
    )
    return sha.decode("ascii")


def init_repository(
    path: Path,
    files: Mapping[str, str],
    *,
    branch: str,
    message: str,
    author: bytes,
    at: int | None = None,
) -> str:
    """A repository at `path` (non-bare, created with its parents when absent) holding
    `files` (path -> text) in one commit on `branch`, HEAD on it; the commit's sha."""
    path.mkdir(parents=True, exist_ok=True)
    repo = Repo.init(str(path))
    try:
        repo.refs.set_symbolic_ref(Ref(b"HEAD"), Ref(f"refs/heads/{branch}".encode()))
        for name, text in files.items():
            target = path / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
        repo.get_worktree().stage(sorted(files))
        return commit_staged(repo, message, author, at=at)
    finally:
        repo.close()


def hive_commit(
    tree: bytes, parent: bytes, identity: str, message: str, now: float | None = None
) -> Commit:
    """A commit of `tree` on `parent` by the hive (`identity` as author and committer, at
    `now` or the present, UTC), not yet stored: a salvage's or a cut-back's."""
    commit = Commit()
    commit.tree = ObjectID(tree)
    commit.parents = [ObjectID(parent)]
    commit.author = commit.committer = identity.encode()
    commit.author_time = commit.commit_time = int(time.time() if now is None else now)
    commit.author_timezone = commit.commit_timezone = 0
    commit.message = message.encode()
    return commit
