"""Scratch trees: the files of one commit written into a fresh directory, for the checks
and the reviewer to run in, and removed afterwards.

A scratch tree has no `.git` and no index: it is what the commit holds, byte for byte,
with no attribute, filter or hook consulted. The directory is created here and every
name in it exclusively (mkdir, O_EXCL, O_NOFOLLOW), so nothing is written through a
symlink. A committed symlink whose target resolves outside the tree is written as a
plain file holding its target text (git's `core.symlinks=false`), so a program run in
the tree cannot follow it out.
"""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from dulwich.index import validate_path_element_default
from dulwich.objects import Commit, ObjectID, Tree
from dulwich.repo import Repo

from hive.git.repo import GitError
from hive.git.sizes import read_stream
from hive.git.status import EXEC_MODE, GITLINK_MODE, LINK_MODE


@dataclass(frozen=True)
class ScratchTree:
    """Commit `sha` written at `path`: `files` regular files and symlinks, of which
    `flattened` were symlinks leading out, written as plain files."""

    path: Path
    sha: str
    files: int
    flattened: tuple[str, ...]


def scratch_tree(repo: Repo, sha: str, path: Path) -> ScratchTree:
    """Write the files of commit `sha` into the directory `path`, which must not exist
    (its parents are created). Raises GitError for an unknown commit, a path that
    exists, or a tree entry that names `.git`, `..` or holds a slash; nothing is left
    behind after a raise."""
    path = Path(path).absolute()
    commit = commit_of(repo, sha)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        path.mkdir()
    except FileExistsError:
        raise GitError(f"{path} exists: a scratch tree needs a fresh directory") from None
    try:
        links, files = _write(repo, commit.tree, str(path))
        flattened = flatten_escaping_links(path, links)
    except BaseException:
        remove_scratch_tree(path)
        raise
    return ScratchTree(path, sha, files, flattened)


def remove_scratch_tree(path: Path) -> None:
    """Delete the scratch tree at `path` with everything in it, also what a check made
    read-only; symlinks are removed, never followed. A path already gone is fine."""
    path = Path(path)
    if path.is_symlink():
        raise GitError(f"{path} is a symlink, not a scratch tree")
    if not path.exists():
        return
    # a check may leave a directory read-only: open every one up first (top down, so
    # each is listable before it is walked; symlinks are not followed)
    os.chmod(path, stat.S_IRWXU)
    for top, dirs, _files in os.walk(path):
        for name in dirs:
            full = os.path.join(top, name)
            if not os.path.islink(full):
                os.chmod(full, stat.S_IRWXU)
    shutil.rmtree(path)


def commit_of(repo: Repo, sha: str) -> Commit:
    try:
        obj = repo.object_store[ObjectID(sha.encode("ascii"))]
    except (KeyError, ValueError, UnicodeEncodeError):
        obj = None
    if not isinstance(obj, Commit):
        raise GitError(f"{repo.path} has no commit {sha!r}")
    return obj


def _write(repo: Repo, tree_sha: bytes, root: str) -> tuple[list[str], int]:
    """Write the tree under `root`; the symlinks made (relative paths) and the count of
    files and symlinks."""
    store = repo.object_store
    links: list[str] = []
    files = 0
    todo: list[tuple[str, bytes]] = [("", tree_sha)]
    while todo:
        prefix, sha = todo.pop()
        tree = store[ObjectID(sha)]
        if not isinstance(tree, Tree):
            raise GitError(f"{sha.decode()} is not a tree")
        for name, mode, entry in tree.iteritems():
            if not name or b"/" in name or b"\0" in name:
                raise GitError(f"refusing to write the path element {name!r}")
            if not validate_path_element_default(name):
                raise GitError(f"refusing to write the path element {name!r}")
            rel = prefix + os.fsdecode(name)
            full = os.path.join(root, rel)
            if stat.S_ISDIR(mode):
                os.mkdir(full)
                todo.append((rel + "/", entry))
            elif mode == GITLINK_MODE:
                os.mkdir(full)  # a submodule: an empty directory, as git leaves it
            elif mode == LINK_MODE:
                _kind, target = store.get_raw(ObjectID(entry))
                os.symlink(target, full)
                links.append(rel)
                files += 1
            else:  # a large file is read as it is written, a slice at a time
                _kind, _size, slices = read_stream(store, entry)
                create_file(full, slices, 0o777 if mode == EXEC_MODE else 0o666)
                files += 1
    return links, files


def create_file(full: str, slices: Iterable[bytes], perm: int) -> None:
    fd = os.open(full, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, perm)
    try:
        for data in slices:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


def flatten_escaping_links(root: Path, links: list[str]) -> tuple[str, ...]:
    """Replace each symlink whose target resolves outside `root` by a plain file of its
    target text; again until none is left (one replaced link can change another's)."""
    real_root = os.path.realpath(root)
    flattened: list[str] = []
    pending = list(links)
    while True:
        out = [rel for rel in pending if _leads_out(real_root, os.path.join(root, rel))]
        if not out:
            return tuple(sorted(flattened))
        for rel in out:
            full = os.path.join(root, rel)
            target = os.readlink(os.fsencode(full))
            os.unlink(full)
            create_file(full, (target,), 0o666)
            flattened.append(rel)
        pending = [rel for rel in pending if rel not in out]


def _leads_out(real_root: str, full: str) -> bool:
    resolved = os.path.realpath(full)
    return resolved != real_root and not resolved.startswith(real_root + os.sep)
