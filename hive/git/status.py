"""What a worktree holds that its HEAD commit does not: the one status the hive needs.

Compared against HEAD (not the index), so work a bee staged but did not commit counts.
The index serves only as a stat cache: a file whose size, mtime and inode match its
index entry is not read again. Untracked files are found by one `scandir` walk; ignore
rules are consulted only for paths HEAD does not know, so a clean tree costs one lstat
per file.
"""

from __future__ import annotations

import hashlib
import os
import stat
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from dulwich.ignore import IgnoreFilterManager
from dulwich.object_store import BaseObjectStore
from dulwich.objects import Blob, Commit, ObjectID, Tree, parse_tree
from dulwich.repo import Repo

from hive.git.index import IndexFile, read_index

FILE_MODE = 0o100644
EXEC_MODE = 0o100755
LINK_MODE = 0o120000
GITLINK_MODE = 0o160000
_SHA_BYTES = 20
FLAT_ENTRIES_MAX = 200_000  # paths of flattened trees kept in memory, in all
_FLAT: dict[bytes, dict[str, Entry]] = {}  # tree id -> its flat form, oldest first
_FLAT_LOCK = threading.Lock()
_OPEN_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
_SLICE = 1 << 20  # bytes of a file hashed at once

Entry = tuple[int, bytes]  # (mode, hex sha)


@dataclass(frozen=True)
class Change:
    """One path that differs from HEAD: `old` is HEAD's entry, `new` the worktree's
    (None for absent)."""

    path: str
    old: Entry | None
    new: Entry | None


def tree_entries(store: BaseObjectStore, sha: bytes) -> Iterable[tuple[bytes, int, bytes]]:
    """(name, mode, hex sha) of each entry of tree `sha`, parsed straight from its raw
    bytes by dulwich's compiled parser (a `Tree` object costs several times that)."""
    type_num, raw = store.get_raw(ObjectID(sha))
    if type_num != Tree.type_num:
        raise ValueError(f"{sha.decode()} is not a tree")
    return parse_tree(raw, _SHA_BYTES)


def flatten(repo: Repo, tree_id: bytes | None) -> dict[str, Entry]:
    """Every blob, symlink and gitlink under `tree_id`, by repository path (a copy the
    caller may change). A tree flattened lately (or whose flat form a salvage gave with
    `remember`) is not read again: a tree id names its contents for good."""
    out: dict[str, Entry] = {}
    if tree_id is None:
        return out
    with _FLAT_LOCK:
        known = _FLAT.get(tree_id)
    if known is not None:
        return dict(known)
    store = repo.object_store
    todo: list[tuple[str, bytes]] = [("", tree_id)]
    while todo:
        prefix, sha = todo.pop()
        for name, mode, child in tree_entries(store, sha):
            path = prefix + name.decode("utf-8", "surrogateescape")
            if stat.S_ISDIR(mode):
                todo.append((path + "/", child))
            else:
                out[path] = (mode, child)
    remember(tree_id, out)
    return dict(out)


def remember(tree_id: bytes, flat: dict[str, Entry]) -> None:
    """Keep `flat` as the flat form of tree `tree_id` (not to be changed afterwards),
    the oldest kept forms dropped past FLAT_ENTRIES_MAX entries in all."""
    with _FLAT_LOCK:
        _FLAT.pop(tree_id, None)
        _FLAT[tree_id] = flat
        total = sum(len(kept) for kept in _FLAT.values())
        while total > FLAT_ENTRIES_MAX and len(_FLAT) > 1:
            total -= len(_FLAT.pop(next(iter(_FLAT))))


def head_tree(repo: Repo) -> bytes | None:
    """The tree of the worktree's HEAD commit, None on an unborn branch."""
    try:
        commit = repo[repo.head()]
    except KeyError:
        return None
    return commit.tree if isinstance(commit, Commit) else None


def mode_of(st: os.stat_result) -> int:
    if stat.S_ISLNK(st.st_mode):
        return LINK_MODE
    if st.st_mode & 0o111:
        return EXEC_MODE
    return FILE_MODE


class SpecialFile(OSError):
    """A FIFO, socket or device node where a file was expected: never opened."""


def is_special(st: os.stat_result) -> bool:
    """A FIFO, socket or device node: what git cannot store and a read could block on
    (a FIFO), fail on (a socket) or never finish (a device)."""
    return not (stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode) or stat.S_ISDIR(st.st_mode))


def blob_id(full: str, st: os.stat_result) -> bytes:
    """The id of the blob git would store for the file or symlink at `full`, the file
    read a slice at a time (never held whole). Raises SpecialFile as `read_blob` does."""
    if not stat.S_ISREG(st.st_mode):
        return read_blob(full, st).id
    with _open_regular(full) as handle:
        size = os.fstat(handle.fileno()).st_size
        digest = hashlib.sha1(b"blob %d\0" % size)
        read = 0
        while piece := handle.read(_SLICE):
            digest.update(piece)
            read += len(piece)
    if read != size:  # it changed while it was read: hashed whole, as it is now
        return read_blob(full, st).id
    return digest.hexdigest().encode()


def _open_regular(full: str) -> BinaryIO:
    """The file at `full` opened for reading without following a link or waiting for a
    writer; SpecialFile when it is not a regular file (swapped since it was stat'ed)."""
    fd = os.open(full, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    handle = open(fd, "rb")  # noqa: SIM115 (the caller closes it)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        handle.close()
        raise SpecialFile(f"{full} is not a regular file")
    return handle


def read_blob(full: str, st: os.stat_result) -> Blob:
    """The blob git would store for the file or symlink at `full` (no filters). Raises
    SpecialFile for anything else, without opening it; the file is opened without
    following a link or waiting for a writer, and read only when it is still regular."""
    if stat.S_ISLNK(st.st_mode):
        return Blob.from_string(os.fsencode(os.readlink(full)))
    if not stat.S_ISREG(st.st_mode):
        raise SpecialFile(f"{full} is not a regular file")
    with _open_regular(full) as handle:
        return Blob.from_string(handle.read())


def _walk(
    root: str, tracked_dirs: set[str], ignored: IgnoreFilterManager
) -> list[tuple[str, os.stat_result]]:
    """Repository paths of files, symlinks and special files on disk, with their lstat,
    skipping `.git`, nested repositories and ignored directories nobody tracks. Each
    directory is read
    through an open descriptor (one per level of depth), and each entry is stat'ed
    relative to it: a long absolute path resolved per file costs more than the stat."""
    found: list[tuple[str, os.stat_result]] = []
    dir_fd = os.open(root, _OPEN_DIR)
    try:
        _walk_at(dir_fd, "", tracked_dirs, ignored, found)
    finally:
        os.close(dir_fd)
    return found


def _walk_at(
    dir_fd: int,
    rel: str,
    tracked_dirs: set[str],
    ignored: IgnoreFilterManager,
    found: list[tuple[str, os.stat_result]],
) -> None:
    with os.scandir(dir_fd) as it:
        entries = list(it)
    for item in entries:
        path = rel + item.name
        if item.name == ".git":
            continue
        if not item.is_dir(follow_symlinks=False):
            found.append((path, item.stat(follow_symlinks=False)))
            continue
        untracked = path not in tracked_dirs
        if untracked and (_lexists(item.name + "/.git", dir_fd) or ignored.is_ignored(path + "/")):
            continue
        inner = os.open(item.name, _OPEN_DIR, dir_fd=dir_fd)
        try:
            _walk_at(inner, path + "/", tracked_dirs, ignored, found)
        finally:
            os.close(inner)


def _lexists(name: str, dir_fd: int) -> bool:
    try:
        os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except OSError:
        return False
    return True


def changes(
    repo: Repo,
    root: Path,
    head: dict[str, Entry] | None = None,
    index: IndexFile | None = None,
    skipped: list[str] | None = None,
) -> list[Change]:
    """Every path whose worktree state differs from HEAD, sorted by path. A FIFO, socket
    or device node is never opened: it is no change (a tracked file it replaced stays as
    HEAD has it), and its path is added to `skipped` when given."""
    if head is None:
        head = flatten(repo, head_tree(repo))
    if index is None:
        index = read_index(Path(repo.index_path()))
    tracked_dirs = {path.rsplit("/", 1)[0] for path in head if "/" in path}
    for directory in list(tracked_dirs):
        while "/" in directory:
            directory = directory.rsplit("/", 1)[0]
            tracked_dirs.add(directory)
    ignored = IgnoreFilterManager.from_repo(repo)
    root_text = str(root)
    found: list[Change] = []
    on_disk = set()
    walked = []
    for path, st in _walk(root_text, tracked_dirs, ignored):
        if is_special(st):
            on_disk.add(path)
            if skipped is not None and (path in head or not ignored.is_ignored(path)):
                skipped.append(path)
        else:
            walked.append((path, st))
    cleans = index.clean_shas([(p.encode("utf-8", "surrogateescape"), st) for p, st in walked])
    for (path, st), clean in zip(walked, cleans, strict=True):
        on_disk.add(path)
        old = head.get(path)
        if old is None and ignored.is_ignored(path):
            continue
        if old is not None and old[0] == GITLINK_MODE:
            continue
        if clean is not None:
            new: Entry = (mode_of(st), clean)
        else:
            new = (mode_of(st), blob_id(os.path.join(root_text, path), st))
        if new != old:
            found.append(Change(path, old, new))
    for path, old in head.items():
        if path not in on_disk and old[0] != GITLINK_MODE:
            found.append(Change(path, old, None))
    return sorted(found, key=lambda change: change.path)
