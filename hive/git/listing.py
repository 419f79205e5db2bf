"""The `queen-*` branches ahead of base, for the export route."""

from __future__ import annotations

import re
from dataclasses import dataclass

from dulwich.diff_tree import tree_changes
from dulwich.graph import find_merge_base
from dulwich.objects import Commit, ObjectID
from dulwich.repo import Repo

from hive.git.repo import resolve

_QUEEN_BRANCH = re.compile(rb"^refs/heads/queen-([1-9][0-9]*)$")


@dataclass(frozen=True)
class BranchInfo:
    """Branch `queen-<issue>` at `head_sha`, `commits` ahead of base, and the files it
    changes since it left base (sorted)."""

    issue: int
    branch: str
    head_sha: str
    commits: int
    changed_files: tuple[str, ...]


def list_branches(repo: Repo, base: str) -> list[BranchInfo]:
    """Every `queen-<issue>` branch with at least one commit beyond `base`, by issue."""
    base_sha = ObjectID(resolve(repo, base).encode())
    found = []
    for ref, sha in repo.refs.as_dict().items():
        match = _QUEEN_BRANCH.match(ref)
        if match is None:
            continue
        ahead = sum(1 for _ in repo.get_walker(include=[sha], exclude=[base_sha]))
        if ahead == 0:
            continue
        found.append(
            BranchInfo(
                issue=int(match.group(1)),
                branch=ref.decode()[len("refs/heads/") :],
                head_sha=sha.decode(),
                commits=ahead,
                changed_files=_changed(repo, base_sha, sha),
            )
        )
    return sorted(found, key=lambda info: info.issue)


def _changed(repo: Repo, base_sha: ObjectID, head: ObjectID) -> tuple[str, ...]:
    """Files changed between the merge base and `head` (git's `base...head`)."""
    bases = find_merge_base(repo, [base_sha, head])
    start = repo.object_store[bases[0]] if bases else None
    end = repo.object_store[head]
    assert isinstance(end, Commit)
    old_tree = start.tree if isinstance(start, Commit) else None
    paths = set()
    for change in tree_changes(repo.object_store, old_tree, end.tree):
        for side in (change.old, change.new):
            if side is not None and side.path is not None:
                paths.add(side.path.decode("utf-8", "surrogateescape"))
    return tuple(sorted(paths))
