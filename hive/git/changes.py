"""The paths a branch changed beyond its base: what "at least one file was committed"
(RULES 8, review_of) counts."""

from __future__ import annotations

from dulwich.diff_tree import tree_changes
from dulwich.objects import Commit, ObjectID
from dulwich.repo import Repo

from hive.git.repo import GitError


def changed_paths(repo: Repo, base_sha: str, head_sha: str) -> tuple[str, ...]:
    """Every path added, changed or removed from `base_sha`'s tree to `head_sha`'s,
    sorted. Raises GitError when either commit is missing."""
    base_tree, head_tree = commit_trees(repo, base_sha, head_sha)
    paths: set[str] = set()
    for change in tree_changes(repo.object_store, base_tree, head_tree):
        for entry in (change.old, change.new):
            if entry is not None and entry.path is not None:
                paths.add(entry.path.decode("utf-8", "replace"))
    return tuple(sorted(paths))


def commit_trees(repo: Repo, base_sha: str, head_sha: str) -> tuple[ObjectID, ObjectID]:
    """The trees of two commits; GitError naming the one that is missing or no commit."""
    trees: list[ObjectID] = []
    for sha in (base_sha, head_sha):
        try:
            commit = repo[sha.encode()]
        except KeyError:
            raise GitError(f"commit {sha[:12]} is not in {repo.path}") from None
        if not isinstance(commit, Commit):
            raise GitError(f"{sha[:12]} in {repo.path} is not a commit")
        trees.append(commit.tree)
    return trees[0], trees[1]
