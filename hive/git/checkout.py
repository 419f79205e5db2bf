"""Write the files of a tree into an empty directory, with their index entries.

Three things make this as fast as git's checkout on a large tree. Every name is created
relative to an open descriptor of its directory: resolving a long absolute path for
each of thousands of files costs several times the write. The objects are read on the
caller's thread while writer threads create the files, so reading a blob out of its
delta chain overlaps the filesystem's work (each side gives the others the interpreter
while it waits in a system call). And there are WRITERS of them, each given whole
directories: creating files in different directories goes on side by side in the
kernel, where one thread would wait on each creation in turn.

The caller's thread makes the directories, so each exists before a writer is given a
file in it. Every name is created exclusively (mkdir, O_EXCL, O_NOFOLLOW) in a directory
this checkout made, so nothing is ever written through a symlink; a path element git
would refuse (`.git`, `..`) is refused before anything of its tree is written.
"""

from __future__ import annotations

import itertools
import os
import stat
import threading
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from dulwich.index import validate_path_element_default
from dulwich.object_store import BaseObjectStore
from dulwich.objects import ObjectID

from hive.git.index import IndexFile
from hive.git.repo import GitError
from hive.git.sizes import read_stream
from hive.git.status import EXEC_MODE, GITLINK_MODE, LINK_MODE, tree_entries

WRITERS = 2 if (os.cpu_count() or 1) <= 2 else 4
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
_OPEN_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
_QUEUED_BYTES = 8 << 20  # of file data waiting for the writers, at most
_DIRS_OPEN = 32  # directory descriptors a writer keeps open, at most


@dataclass(frozen=True, slots=True)
class _Make:
    """Create `name` in directory `parent` (relative to the root, b"" for the root): a
    gitlink, a symlink to `data`, or a file of `data` (of `slices`, read as they are
    written, for a large one); its index entry goes under `path`."""

    parent: bytes
    name: bytes
    mode: int
    sha: bytes
    path: bytes
    data: bytes
    slices: Iterable[bytes] = ()


Made = tuple[bytes, os.stat_result, bytes, int]  # path, its lstat, blob sha (hex), mode


def write_tree(store: BaseObjectStore, tree_sha: bytes, root: Path, index: IndexFile) -> list[Made]:
    """Write every file of tree `tree_sha` under `root` (an empty directory) and set its
    entry in `index` (not written); what was made. Raises GitError for a refused path
    element and OSError when the filesystem refuses."""
    root_fd = os.open(root, _OPEN_DIR)
    queue = _Queue(WRITERS)
    writers = [_Writer(root_fd, queue, n) for n in range(WRITERS)]
    threads = [
        threading.Thread(target=w.run, name=f"hive-checkout-{w.number}", daemon=True)
        for w in writers
    ]
    for thread in threads:
        thread.start()
    try:
        _walk(store, tree_sha, b"", root_fd, queue, [0])
    finally:
        queue.finish()
        for thread in threads:
            thread.join()
        os.close(root_fd)
    if queue.failure is not None:
        raise queue.failure
    made = [entry for writer in writers for entry in writer.made]
    for path, st, sha, mode in made:
        index.set(path, st, sha, mode)
    return made


def _walk(
    store: BaseObjectStore,
    tree_sha: bytes,
    prefix: bytes,
    dir_fd: int,
    queue: _Queue,
    dirs: list[int],
) -> None:
    """Make the tree's directories (depth first, a descriptor open per level) and hand
    its files to the writers, each directory's to one writer, in turn by directory."""
    entries = list(tree_entries(store, tree_sha))
    for name, _mode, _sha in entries:
        # a name holding a slash (`../x`, `a/../../x`) would be opened through the
        # directories it names, out of the tree: git's fsck refuses such a tree too
        if b"/" in name or b"\0" in name or not validate_path_element_default(name):
            raise GitError(f"refusing to check out the path element {name!r}")
    writer = dirs[0] % WRITERS
    dirs[0] += 1
    parent = prefix[:-1]
    for name, mode, sha in entries:
        if queue.failure is not None:
            return
        path = prefix + name
        if stat.S_ISDIR(mode):
            os.mkdir(name, dir_fd=dir_fd)
            inner = os.open(name, _OPEN_DIR, dir_fd=dir_fd)
            try:
                _walk(store, sha, path + b"/", inner, queue, dirs)
            finally:
                os.close(inner)
            continue
        if mode == GITLINK_MODE:
            queue.put(writer, _Make(parent, name, mode, sha, path, b""))
        elif mode == LINK_MODE:
            _type, data = store.get_raw(ObjectID(sha))
            queue.put(writer, _Make(parent, name, mode, sha, path, data))
        else:  # a large file is read as it is written, a slice at a time
            _type, _size, slices = read_stream(store, sha)
            if isinstance(slices, tuple):  # read whole: its bytes count in the queue
                queue.put(writer, _Make(parent, name, mode, sha, path, b"".join(slices)))
            else:
                queue.put(writer, _Make(parent, name, mode, sha, path, b"", slices))


class _Queue:
    """What each writer is to make, in order, with at most _QUEUED_BYTES of file data
    waiting in all (one larger file may wait alone), and the first failure."""

    def __init__(self, writers: int) -> None:
        self.pending: list[deque[_Make]] = [deque() for _ in range(writers)]
        self.pending_bytes = 0
        self.room = threading.Condition()
        self.finished = False
        self.failure: BaseException | None = None

    def has_room(self, size: int) -> bool:
        """Whether `size` more bytes may wait: within _QUEUED_BYTES, or alone."""
        return not self.pending_bytes or self.pending_bytes + size <= _QUEUED_BYTES

    def put(self, writer: int, item: _Make) -> None:
        with self.room:
            while not self.has_room(len(item.data)) and self.failure is None:
                self.room.wait()
            self.pending[writer].append(item)
            self.pending_bytes += len(item.data)
            self.room.notify_all()

    def take(self, writer: int) -> _Make | None:
        """The next item for `writer`; None once there is no more."""
        mine = self.pending[writer]
        with self.room:
            while not mine and not self.finished:
                self.room.wait()
            if not mine:
                return None
            item = mine.popleft()
            self.pending_bytes -= len(item.data)
            self.room.notify_all()
            return item

    def fail(self, err: BaseException) -> None:
        with self.room:
            if self.failure is None:
                self.failure = err
            self.room.notify_all()

    def finish(self) -> None:
        with self.room:
            self.finished = True
            self.room.notify_all()


class _Writer:
    """Creates what the queue gives it, in order, on its own thread; a failure goes to
    the queue and the rest is skipped (the caller raises it)."""

    def __init__(self, root_fd: int, queue: _Queue, number: int) -> None:
        self.root_fd, self.queue, self.number = root_fd, queue, number
        self.dirs: dict[bytes, int] = {}  # relative path -> open descriptor, oldest first
        self.made: list[Made] = []

    def run(self) -> None:
        try:
            while (item := self.queue.take(self.number)) is not None:
                if self.queue.failure is not None:
                    continue
                try:
                    self._do(item)
                except BaseException as err:  # handed to the caller's thread
                    self.queue.fail(err)
        finally:
            for fd in self.dirs.values():
                os.close(fd)

    def _dir(self, parent: bytes) -> int:
        if not parent:
            return self.root_fd
        fd = self.dirs.get(parent)
        if fd is None:
            if len(self.dirs) >= _DIRS_OPEN:
                os.close(self.dirs.pop(next(iter(self.dirs))))
            # every directory on the way was made by this checkout: none is a symlink
            fd = self.dirs[parent] = os.open(parent, _OPEN_DIR, dir_fd=self.root_fd)
        return fd

    def _do(self, item: _Make) -> None:
        at = self._dir(item.parent)
        name, mode = item.name, item.mode
        if mode == GITLINK_MODE:
            os.mkdir(name, dir_fd=at)
            st = os.stat(name, dir_fd=at, follow_symlinks=False)
        elif mode == LINK_MODE:
            os.symlink(item.data, name, dir_fd=at)
            st = os.stat(name, dir_fd=at, follow_symlinks=False)
        else:
            fd = os.open(name, _CREATE, 0o777 if mode == EXEC_MODE else 0o666, dir_fd=at)
            try:
                for data in itertools.chain((item.data,), item.slices):
                    left = memoryview(data)
                    while left:
                        left = left[os.write(fd, left) :]
                st = os.fstat(fd)
            finally:
                os.close(fd)
        self.made.append((item.path, st, item.sha, mode))
