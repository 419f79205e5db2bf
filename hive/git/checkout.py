"""Write the files of a tree into an empty directory, with their index entries.

Two things make this as fast as git's checkout on a large tree. Every name is created
relative to an open descriptor of its directory: resolving a long absolute path for each
of thousands of files costs several times the write. And the objects are read on this
thread while a writer thread creates the files, so reading a blob out of its delta
chain overlaps the filesystem's work on the previous one (each side gives the other the
interpreter while it waits in a system call).

Every name is created exclusively (mkdir, O_EXCL, O_NOFOLLOW) in a directory this
checkout made, so nothing is ever written through a symlink; a path element git would
refuse (`.git`, `..`) is refused before anything of its tree is written.
"""

from __future__ import annotations

import os
import stat
import threading
from collections import deque
from dataclasses import dataclass
from pathlib import Path

from dulwich.index import validate_path_element_default
from dulwich.object_store import BaseObjectStore
from dulwich.objects import ObjectID

from hive.git.index import IndexFile
from hive.git.repo import GitError
from hive.git.status import EXEC_MODE, GITLINK_MODE, LINK_MODE, tree_entries

_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
_OPEN_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
_QUEUED_BYTES = 8 << 20  # of file data waiting for the writer, at most


@dataclass(frozen=True, slots=True)
class _Make:
    """Create `name` in directory `parent` (a key of the writer's open directories):
    a directory (kept open as `key` until `_Close`), a gitlink, a symlink to `data`, or
    a file of `data`; its index entry goes under `path`."""

    parent: int
    name: bytes
    mode: int
    sha: bytes
    path: bytes
    data: bytes
    key: int


@dataclass(frozen=True, slots=True)
class _Close:
    key: int


def write_tree(store: BaseObjectStore, tree_sha: bytes, root: Path, index: IndexFile) -> None:
    """Write every file of tree `tree_sha` under `root` (an empty directory) and set its
    entry in `index` (not written). Raises GitError for a refused path element and
    OSError when the filesystem refuses."""
    writer = _Writer(os.open(root, _OPEN_DIR), index)
    thread = threading.Thread(target=writer.run, name="hive-checkout", daemon=True)
    thread.start()
    try:
        _walk(store, tree_sha, b"", 0, writer)
    finally:
        writer.put(None)
        thread.join()
    if writer.failure is not None:
        raise writer.failure


def _walk(
    store: BaseObjectStore, tree_sha: bytes, prefix: bytes, key: int, writer: _Writer
) -> None:
    entries = list(tree_entries(store, tree_sha))
    for name, _mode, _sha in entries:
        if not validate_path_element_default(name):
            raise GitError(f"refusing to check out the path element {name!r}")
    for name, mode, sha in entries:
        if writer.failure is not None:
            return
        path = prefix + name
        if stat.S_ISDIR(mode):
            inner = writer.new_key()
            writer.put(_Make(key, name, mode, sha, path, b"", inner))
            _walk(store, sha, path + b"/", inner, writer)
            writer.put(_Close(inner))
        elif mode == GITLINK_MODE:
            writer.put(_Make(key, name, mode, sha, path, b"", 0))
        else:
            _type, data = store.get_raw(ObjectID(sha))
            writer.put(_Make(key, name, mode, sha, path, data, 0))


class _Writer:
    """Creates what it is given, in order, on its own thread; remembers the first
    failure and skips the rest (the caller raises it). At most _QUEUED_BYTES of file
    data wait for it (one larger file may wait alone)."""

    def __init__(self, root_fd: int, index: IndexFile) -> None:
        self.dirs = {0: root_fd}
        self.index = index
        self.pending: deque[_Make | _Close | None] = deque()
        self.pending_bytes = 0
        self.room = threading.Condition()
        self.failure: BaseException | None = None
        self.keys = 0

    def new_key(self) -> int:
        self.keys += 1
        return self.keys

    def put(self, item: _Make | _Close | None) -> None:
        size = _size(item)
        with self.room:
            while not self.has_room(size):
                self.room.wait()
            self.pending.append(item)
            self.pending_bytes += size
            self.room.notify_all()

    def has_room(self, size: int) -> bool:
        """Whether `size` more bytes may wait: within _QUEUED_BYTES, or alone."""
        return not self.pending or self.pending_bytes + size <= _QUEUED_BYTES

    def _take(self) -> _Make | _Close | None:
        with self.room:
            while not self.pending:
                self.room.wait()
            item = self.pending.popleft()
            self.pending_bytes -= _size(item)
            self.room.notify_all()
            return item

    def run(self) -> None:
        try:
            while (item := self._take()) is not None:
                if self.failure is not None:
                    continue
                try:
                    self._do(item)
                except BaseException as err:  # handed to the caller's thread
                    self.failure = err
        finally:
            for fd in self.dirs.values():
                os.close(fd)

    def _do(self, item: _Make | _Close) -> None:
        if isinstance(item, _Close):
            os.close(self.dirs.pop(item.key))
            return
        at = self.dirs[item.parent]
        name, mode = item.name, item.mode
        if stat.S_ISDIR(mode):
            os.mkdir(name, dir_fd=at)
            self.dirs[item.key] = os.open(name, _OPEN_DIR, dir_fd=at)
            return
        if mode == GITLINK_MODE:
            os.mkdir(name, dir_fd=at)
            st = os.stat(name, dir_fd=at, follow_symlinks=False)
        elif mode == LINK_MODE:
            os.symlink(item.data, name, dir_fd=at)
            st = os.stat(name, dir_fd=at, follow_symlinks=False)
        else:
            fd = os.open(name, _CREATE, 0o777 if mode == EXEC_MODE else 0o666, dir_fd=at)
            try:
                left = memoryview(item.data)
                while left:
                    left = left[os.write(fd, left) :]
                st = os.fstat(fd)
            finally:
                os.close(fd)
        self.index.set(item.path, st, item.sha, mode)


def _size(item: _Make | _Close | None) -> int:
    return len(item.data) if isinstance(item, _Make) else 0
