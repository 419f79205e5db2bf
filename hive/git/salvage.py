"""Salvage: commit what a turn left uncommitted inside its boundary (DESIGN 5.6).

Only boundary paths are committed, at most SALVAGE_MAX_PATHS of them in path order; a
rename travels as its pair (both paths or neither); a deletion is a change like any
other. What changed outside the boundary is reported and left on disk; a FIFO, socket or
device node is skipped and named, never opened. The commit is built from objects here,
so no hook, filter or signing program runs. A file of STREAMED_BYTES or more is hashed,
compressed and written into a pack a slice at a time, so a 200 MB file costs megabytes
of memory, not several times its size.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from dulwich.objects import Commit, ObjectID, ShaFile, Tree
from dulwich.refs import Ref
from dulwich.repo import Repo

from hive.git.commits import hive_commit
from hive.git.index import IndexFile, read_index
from hive.git.repo import GitError
from hive.git.safety import disk_problem, plain_path
from hive.git.status import (
    LINK_MODE,
    Change,
    Entry,
    changes,
    flatten,
    head_tree,
    read_blob,
    remember,
)
from hive.git.storing import store_files, store_objects
from hive.rules.carried import in_boundary

SALVAGE_MAX_PATHS = 200
STREAMED_BYTES = 1 << 20  # a file this large goes into its own pack a slice at a time
REASONS = ("finished", "reaped", "handed back")
HIVE_IDENTITY = "hive <hive@localhost>"


@dataclass(frozen=True)
class Salvage:
    """`sha` of the salvage commit (None: nothing to commit); the paths committed, the
    changed paths left outside the boundary, boundary paths left over the cap, and the
    special files (FIFO, socket, device node) skipped unopened, wherever they sit."""

    sha: str | None
    committed: tuple[str, ...]
    outside: tuple[str, ...]
    over_cap: tuple[str, ...]
    skipped: tuple[str, ...] = ()


def salvage(
    worktree: Path,
    boundary: Sequence[str],
    reason: str,
    *,
    max_paths: int = SALVAGE_MAX_PATHS,
    identity: str = HIVE_IDENTITY,
    now: float | None = None,
) -> Salvage:
    """Commit the uncommitted boundary paths of `worktree` onto its branch.

    Raises GitError (unknown reason, detached HEAD, branch moved meanwhile) or
    BoundaryError (a boundary path written with `..`, absolute, into `.git`)."""
    if reason not in REASONS:
        raise GitError(f"salvage reason {reason!r} is not one of {', '.join(REASONS)}")
    root = Path(worktree).absolute()
    # a path whose text leaves the repository is the caller's mistake: refused. On disk
    # nothing is followed: the status walk never enters a symlink, and a symlink that
    # leads out (one the bee made of a boundary file, say) is reported, not salvaged.
    allowed = tuple(sorted({plain_path(path) for path in boundary}))
    repo = Repo(str(root))
    try:
        return _salvage(repo, root, allowed, reason, max_paths, identity, now)
    finally:
        repo.close()


def _salvage(
    repo: Repo,
    root: Path,
    allowed: tuple[str, ...],
    reason: str,
    max_paths: int,
    identity: str,
    now: float | None,
) -> Salvage:
    refs, head_sha = repo.refs.follow(Ref(b"HEAD"))
    branch = refs[-1]
    if head_sha is None or not branch.startswith(b"refs/heads/"):
        raise GitError(f"worktree {root} has a detached HEAD: nothing to salvage onto")
    tree_id = head_tree(repo)
    index = read_index(Path(repo.index_path()))
    head = flatten(repo, tree_id)
    specials: list[str] = []
    found = changes(repo, root, head, index, specials)
    skipped = tuple(sorted(specials))
    # a symlink leading out of the worktree is never salvaged, wherever it sits
    found_safe = [c for c in found if not _links_out(root, c)]
    inside, outside = _split(found_safe, allowed)
    outside += [c.path for c in found if _links_out(root, c)]
    taken: list[list[Change]] = []
    over: list[str] = []
    count = 0
    for group in inside:
        if over or count + len(group) > max_paths:
            over.extend(change.path for change in group)
            continue
        taken.append(group)
        count += len(group)
    committed = [change for group in taken for change in group]
    if not committed:
        return Salvage(None, (), tuple(sorted(outside)), tuple(over), skipped)
    # the new objects go in as one small pack: a loose object costs a directory and a
    # file each, which is most of a salvage's time on a slow filesystem
    new: list[ShaFile] = []
    final: dict[str, Entry | None] = {c.path: c.new for c in committed}
    large: list[str] = []  # files of STREAMED_BYTES or more: read into a pack as they go
    for path, entry in final.items():
        if entry is not None and ObjectID(entry[1]) not in repo.object_store:
            full = os.path.join(root, path)
            st = os.lstat(full)
            if stat.S_ISREG(st.st_mode) and st.st_size >= STREAMED_BYTES:
                large.append(path)
                continue
            blob = read_blob(full, st)
            new.append(blob)
            final[path] = (entry[0], blob.id)  # what was read is what is committed
    if large:
        shas = store_files(repo.object_store, [os.path.join(root, path) for path in large])
        for path, blob_sha in zip(large, shas, strict=True):
            kept = final[path]
            assert kept is not None
            final[path] = (kept[0], blob_sha)
    new_tree = apply_updates(repo, tree_id, final, new)
    commit = _commit(branch, head_sha, new_tree.id, reason, len(committed), identity, now)
    new.append(commit)
    store_objects(repo.object_store, new)
    name = branch.decode().removeprefix("refs/heads/")
    if not repo.refs.set_if_equals(Ref(branch), ObjectID(head_sha), commit.id):
        raise GitError(f"{name} moved during salvage; the commit {commit.id.decode()} is unused")
    sha = commit.id.decode()
    _refresh_index(index, root, final)
    # the next salvage here starts from this commit: its flat tree is known already
    for path, entry in final.items():
        if entry is None:
            head.pop(path, None)
        else:
            head[path] = entry
    remember(new_tree.id, head)
    return Salvage(
        sha,
        tuple(sorted(c.path for c in committed)),
        tuple(sorted(outside)),
        tuple(over),
        skipped,
    )


def _links_out(root: Path, change: Change) -> bool:
    return (
        change.new is not None
        and change.new[0] == LINK_MODE
        and disk_problem(root, change.path) is not None
    )


def _split(found: list[Change], allowed: tuple[str, ...]) -> tuple[list[list[Change]], list[str]]:
    """Boundary changes grouped (a rename is one group of two, ordered by its new path)
    and the paths outside. A rename with one side outside stays whole, outside."""
    deleted: dict[bytes, list[Change]] = {}
    for change in found:
        if change.old is not None and change.new is None:
            deleted.setdefault(change.old[1], []).append(change)
    paired: set[str] = set()
    groups: list[tuple[str, list[Change]]] = []
    for change in found:
        if change.old is None and change.new is not None and deleted.get(change.new[1]):
            source = deleted[change.new[1]].pop(0)
            paired.update((source.path, change.path))
            groups.append((change.path, [source, change]))
    groups.extend((c.path, [c]) for c in found if c.path not in paired)
    inside: list[list[Change]] = []
    outside: list[str] = []
    for _key, group in sorted(groups, key=lambda g: g[0]):
        if all(in_boundary(change.path, allowed) for change in group):
            inside.append(group)
        else:
            outside.extend(change.path for change in group)
    return inside, outside


def apply_updates(
    repo: Repo, tree_id: bytes | None, updates: dict[str, Entry | None], new: list[ShaFile]
) -> Tree:
    """A new tree: `tree_id` with each path set to its entry, or removed for None. New
    trees are appended to `new`."""
    tree = Tree()
    if tree_id is not None:
        # a copy made from the raw bytes: one compiled parse, not an add per entry (a
        # directory of the real world holds hundreds)
        type_num, raw = repo.object_store.get_raw(ObjectID(tree_id))
        loaded = Tree.from_raw_string(type_num, raw)
        assert isinstance(loaded, Tree)
        tree = loaded
    nested: dict[str, dict[str, Entry | None]] = {}
    for path, entry in updates.items():
        head, sep, rest = path.partition("/")
        if sep:
            nested.setdefault(head, {})[rest] = entry
            continue
        name = head.encode("utf-8", "surrogateescape")
        if entry is None:
            if name in tree and not stat.S_ISDIR(tree[name][0]):
                del tree[name]
        else:
            tree.add(name, entry[0], ObjectID(entry[1]))
    for directory, inner in nested.items():
        name = directory.encode("utf-8", "surrogateescape")
        sub = tree[name][1] if name in tree and stat.S_ISDIR(tree[name][0]) else None
        subtree = apply_updates(repo, sub, inner, new)
        if len(subtree) == 0:
            if name in tree:
                del tree[name]
        else:
            tree.add(name, stat.S_IFDIR, subtree.id)
    if tree_id is None or tree.id != tree_id:
        new.append(tree)
    return tree


def _commit(
    branch: bytes,
    parent: bytes,
    tree: bytes,
    reason: str,
    count: int,
    identity: str,
    now: float | None,
) -> Commit:
    name = branch.decode().removeprefix("refs/heads/")
    files = "file" if count == 1 else "files"
    message = f"salvage ({reason}): {count} {files} left uncommitted on {name}\n"
    return hive_commit(tree, parent, identity, message, now)


def _refresh_index(index: IndexFile, root: Path, final: dict[str, Entry | None]) -> None:
    """Make the index agree with the new commit for the committed paths, so `git status`
    shows only what was left."""
    for path, entry in final.items():
        key = path.encode("utf-8", "surrogateescape")
        if entry is None:
            index.remove(key)
        else:
            index.set(key, os.lstat(os.path.join(root, path)), entry[1], entry[0])
    index.write()
