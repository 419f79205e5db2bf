"""What base holds, in the form `hive.rules.shape` asks for (rules do no I/O).

`shape_problem(labels, boundary, body, files, dirs, symlinks)` judges a boundary against
the files, directories and symlinks (with their stored targets) of the tree at base;
this module reads them once per base commit. The disk-side check of the same paths in a
worktree, after a bee has run, is `hive.git.safety.boundary_path`.
"""

from __future__ import annotations

import stat
from dataclasses import dataclass

from dulwich.objects import Commit, ObjectID, Tree
from dulwich.repo import Repo

from hive.git.repo import resolve


@dataclass(frozen=True)
class BaseFacts:
    """The tree of one base commit: every file path, every directory path (no root) and
    every symlink with its target as stored."""

    sha: str
    files: frozenset[str]
    dirs: frozenset[str]
    symlinks: dict[str, str]


def base_facts(repo: Repo, base: str) -> BaseFacts:
    """Read the tree of `base` (a branch, `origin/<base>`, ref or sha). Raises GitError."""
    sha = resolve(repo, base)
    commit = repo.object_store[ObjectID(sha.encode())]
    assert isinstance(commit, Commit)
    files: set[str] = set()
    dirs: set[str] = set()
    symlinks: dict[str, str] = {}
    todo: list[tuple[str, bytes]] = [("", commit.tree)]
    while todo:
        prefix, tree_sha = todo.pop()
        tree = repo.object_store[ObjectID(tree_sha)]
        assert isinstance(tree, Tree)
        for name, mode, child in tree.iteritems():
            path = prefix + name.decode("utf-8", "surrogateescape")
            if stat.S_ISDIR(mode):
                dirs.add(path)
                todo.append((path + "/", child))
            elif stat.S_ISLNK(mode):
                _type, target = repo.object_store.get_raw(child)
                symlinks[path] = target.decode("utf-8", "surrogateescape")
            else:
                files.add(path)
    return BaseFacts(sha, frozenset(files), frozenset(dirs), symlinks)
