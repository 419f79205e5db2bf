"""The change a branch made against its base as a unified diff, bounded: what a model
reviewer reads (hive/agents/review.py). A diff past its bound is cut at a line's end
and the caller is told how much was left out, so the brief can say so."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

from dulwich.patch import write_tree_diff
from dulwich.repo import Repo

from hive.git.changes import commit_trees

DIFF_MAX_BYTES = 64 * 1024


class _Full(Exception):
    """The bound is reached: stop writing."""


class _Bounded:
    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.parts: list[bytes] = []
        self.size = 0
        self.cut = False

    def write(self, data: bytes) -> None:
        if self.size + len(data) > self.limit:
            room = self.limit - self.size
            self.parts.append(data[:room])
            self.size = self.limit
            self.cut = True
            raise _Full
        self.parts.append(data)
        self.size += len(data)

    def writelines(self, lines: list[bytes]) -> None:
        for line in lines:
            self.write(line)


@dataclass(frozen=True)
class Diff:
    """The diff's text (whole lines, UTF-8 with errors replaced) and whether it was cut."""

    text: str
    cut: bool


def bounded_diff(repo: Repo, base_sha: str, head_sha: str, max_bytes: int = DIFF_MAX_BYTES) -> Diff:
    """The unified diff from `base_sha`'s tree to `head_sha`'s, at most `max_bytes`.
    Raises GitError when either commit is missing."""
    base_tree, head_tree = commit_trees(repo, base_sha, head_sha)
    out = _Bounded(max_bytes)
    with contextlib.suppress(_Full):
        write_tree_diff(out, repo.object_store, base_tree, head_tree)  # type: ignore[arg-type]
    data = b"".join(out.parts)
    if out.cut and b"\n" in data:
        data = data[: data.rindex(b"\n") + 1]
    return Diff(data.decode("utf-8", "replace"), out.cut)
