"""Kept trees: scratch trees that stay on disk between jobs, each brought to the next
commit by the change between the tree it holds and the one asked for.

Writing a whole tree for every check and every review is mostly file creation, the
slowest thing this filesystem does; two commits of one repository differ in a few files.
A kept tree writes those (and removes what the old tree had and the new one has not),
and is otherwise what `hive.git.scratch.scratch_tree` would write, byte for byte, mode
for mode, with the same refusals and the same symlinks flattened.

What ran in a tree last (a check, a reviewer: untrusted programs) may have changed it, so
before the tree is brought forward it is verified against what it was left holding, as
git's index verifies a worktree: one `lstat` a path, and a path whose inode, size, mode,
link count, mtime or ctime moved is written again. A change within the clock tick of the
tree's own last write would not move ctime (git's "racily clean" files), so the files of
that tick are compared by content as well. Whatever is on disk that the tree did not
hold (a file, a directory, a FIFO a check left) is removed; a directory gets its mode
back and loses the ACLs and user attributes a program may have set on it. Anything the
verification cannot explain (a failed removal, a root that is not a directory) wipes the
tree and writes it whole.

`KeptTrees` is a pool of them under one directory, one tree per caller at a time
(`take` and `give_back`), a new one made when all are in use. The change between the two
trees is `hive.git.treechange`.
"""

from __future__ import annotations

import errno
import os
import stat
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from dulwich.objects import ObjectID
from dulwich.repo import Repo

from hive.git.scratch import (
    ScratchTree,
    commit_of,
    create_file,
    flatten_escaping_links,
    remove_scratch_tree,
)
from hive.git.sizes import read_stream
from hive.git.status import EXEC_MODE, GITLINK_MODE, LINK_MODE, SpecialFile, blob_id
from hive.git.treechange import Entry, tree_change

KEPT_PREFIX = "kept-"
_CLEARED_XATTRS = ("user.", "system.posix_acl_")  # what a program may set and we clear

Sig = tuple[int, int, int, int, int, int, int]


def _sig(st: os.stat_result) -> Sig:
    return (
        st.st_mode,
        st.st_ino,
        st.st_size,
        st.st_nlink,
        st.st_mtime_ns,
        st.st_ctime_ns,
        st.st_uid,
    )


@dataclass
class _Held:
    """What the tree holds at one path: its entry, its lstat as left (None until it is
    written), and whether it is a symlink written as a plain file (it led out)."""

    entry: Entry
    st: os.stat_result | None = None
    flattened: bool = False

    @property
    def sig(self) -> Sig | None:
        return None if self.st is None else _sig(self.st)


@dataclass
class KeptTree:
    """One kept tree at `path`: the tree id it holds (None: nothing known, the directory
    is emptied before use) and each path's entry and lstat. `flatten`: symlinks that lead
    out are written as plain files (a scratch tree's rule; a bee's worktree keeps them).
    `keep_top`: names at the top that are not the tree's and stay (a worktree's `.git`)."""

    path: Path
    flatten: bool = True
    keep_top: frozenset[str] = frozenset()
    tree: bytes | None = None
    held: dict[str, _Held] = field(default_factory=dict)
    dirs: set[str] = field(default_factory=set)
    racy: set[str] = field(default_factory=set)  # written in the last write's clock tick
    dir_mode: int = 0
    flattened: tuple[str, ...] = ()

    def bring(self, repo: Repo, sha: str) -> ScratchTree:
        """Make the directory hold commit `sha`'s files (see the module). Raises GitError
        for an unknown commit or a refused path element, with the directory wiped."""
        commit = commit_of(repo, sha)
        try:
            try:
                self._bring(repo, commit.tree)
            except OSError:  # what the verification cannot explain: whole again
                self._wipe()
                self._bring(repo, commit.tree)
        except BaseException:
            self._wipe()
            raise
        return ScratchTree(self.path, sha, len(self.held), self.flattened)

    def wipe(self) -> None:
        """Remove the directory and forget what it held."""
        self._wipe()

    # ---- the steps ------------------------------------------------------------------

    def _wipe(self) -> None:
        remove_scratch_tree(self.path)
        self.tree, self.held, self.dirs, self.racy, self.flattened = None, {}, set(), set(), ()

    def _bring(self, repo: Repo, tree: bytes) -> None:
        root = str(self.path)
        if self.tree is None:
            if os.path.lexists(root):
                remove_scratch_tree(self.path)
            self.path.parent.mkdir(parents=True, exist_ok=True)
            os.mkdir(root)
            self.dir_mode = os.lstat(root).st_mode
        else:
            st = os.lstat(root)
            if not stat.S_ISDIR(st.st_mode):
                raise OSError(f"{root} is no longer a directory")
        stale = self._verify(repo, root)
        removed: list[str] = []
        added: dict[str, Entry] = {}
        made_dirs: list[str] = []
        tree_change(repo, self.tree, tree, "", removed, added, made_dirs)
        written = self._apply(repo, root, stale, removed, added, made_dirs)
        written |= self._links(repo, root)
        self._seal(root, written)
        self.tree = tree

    def _verify(self, repo: Repo, root: str) -> set[str]:
        """Remove what the tree did not hold and what changed since it was left; the
        paths removed that it held (to be written again)."""
        stale: set[str] = set()
        seen: set[str] = set()
        todo = [""]
        while todo:
            rel = todo.pop()
            here = os.path.join(root, rel) if rel else root
            self._reset_dir(here)
            with os.scandir(here) as it:
                items = list(it)
            for item in items:
                path = rel + item.name
                if not rel and item.name in self.keep_top:
                    continue
                st = item.stat(follow_symlinks=False)
                held = self.held.get(path)
                if stat.S_ISDIR(st.st_mode):
                    if path in self.dirs and held is None:
                        todo.append(path + "/")
                        continue
                    if held is not None and held.entry[0] == GITLINK_MODE:
                        seen.add(path)
                        if _sig(st)[0] == self.dir_mode and not os.listdir(item.path):
                            continue
                        stale.add(path)
                    remove_scratch_tree(Path(item.path))
                    continue
                if held is not None:
                    seen.add(path)
                    if _sig(st) == held.sig and (
                        path not in self.racy or _same(item.path, st, held)
                    ):
                        continue
                    stale.add(path)
                os.unlink(item.path)
        stale.update(path for path in self.held if path not in seen)
        return stale

    def _reset_dir(self, full: str) -> None:
        st = os.lstat(full)
        if not stat.S_ISDIR(st.st_mode):
            raise OSError(f"{full} is no longer a directory")
        if st.st_mode != self.dir_mode:
            os.chmod(full, stat.S_IMODE(self.dir_mode))
        try:
            names = os.listxattr(full, follow_symlinks=False)
        except OSError as err:  # a filesystem without attributes has none to clear
            if err.errno not in (errno.ENOTSUP, errno.EOPNOTSUPP):
                raise
            names = []
        for name in names:
            if name.startswith(_CLEARED_XATTRS):
                os.removexattr(full, name, follow_symlinks=False)

    def _apply(
        self,
        repo: Repo,
        root: str,
        stale: set[str],
        removed: list[str],
        added: dict[str, Entry],
        made_dirs: list[str],
    ) -> set[str]:
        """Remove what the new tree has not, write what it has new or what went stale;
        the paths written."""
        for path in removed:
            full = os.path.join(root, path)
            if path in self.dirs:
                remove_scratch_tree(Path(full))
                self.dirs.discard(path)
                inside = path + "/"
                for gone in [p for p in self.held if p.startswith(inside)]:
                    del self.held[gone]
                    stale.discard(gone)
                self.dirs = {d for d in self.dirs if not d.startswith(inside)}
            elif path in self.held:
                del self.held[path]
                if path not in stale and os.path.lexists(full):
                    if os.path.isdir(full) and not os.path.islink(full):
                        remove_scratch_tree(Path(full))  # a gitlink's directory
                    else:
                        os.unlink(full)
                stale.discard(path)
        for path in made_dirs:
            os.mkdir(os.path.join(root, path))
            self.dirs.add(path)
        store = repo.object_store
        todo = dict(added)
        for path in stale:
            todo.setdefault(path, self.held[path].entry)
        for path, entry in todo.items():
            full = os.path.join(root, path)
            if path in self.held and path not in stale:  # changed: the old one goes
                if self.held[path].entry[0] == GITLINK_MODE:
                    remove_scratch_tree(Path(full))
                else:
                    os.unlink(full)
            mode, sha = entry
            if mode == GITLINK_MODE:
                os.mkdir(full)
            elif mode == LINK_MODE:
                _kind, target = store.get_raw(ObjectID(sha))
                os.symlink(target, full)
            else:
                _kind, _size, slices = read_stream(store, sha)
                create_file(full, slices, 0o777 if mode == EXEC_MODE else 0o666)
            self.held[path] = _Held(entry)
        return set(todo)

    def _links(self, repo: Repo, root: str) -> set[str]:
        """Flatten the symlinks that lead out, as a fresh tree would: the ones flattened
        before are made symlinks again first (a change elsewhere may have moved where
        they lead). The paths rewritten."""
        links = sorted(p for p, h in self.held.items() if h.entry[0] == LINK_MODE)
        if not links or not self.flatten:
            self.flattened = ()
            return set()
        rewritten: set[str] = set()
        for path in links:
            held = self.held[path]
            if held.flattened:
                full = os.path.join(root, path)
                _kind, target = repo.object_store.get_raw(ObjectID(held.entry[1]))
                os.unlink(full)
                os.symlink(target, full)
                held.flattened = False
                rewritten.add(path)
        self.flattened = flatten_escaping_links(Path(root), links)
        for path in self.flattened:
            self.held[path].flattened = True
            rewritten.add(path)
        return rewritten

    def _seal(self, root: str, written: set[str]) -> None:
        """Record the lstat of every path written; the ones written in the last clock
        tick are compared by content at the next verification."""
        newest = 0
        for path in written:
            st = self.held[path].st = os.lstat(os.path.join(root, path))
            newest = max(newest, st.st_ctime_ns)
        if written:
            self._racy_since(newest)

    def _racy_since(self, newest: int) -> None:
        # with any path kept from before as new (a clock that stood still)
        self.racy = {p for p, h in self.held.items() if h.st is None or h.st.st_ctime_ns >= newest}

    def adopt(self, tree: bytes, made: Iterable[tuple[bytes, os.stat_result, bytes, int]]) -> None:
        """Take as held what a checkout just wrote at `path` (tree `tree`: each path, its
        lstat, blob sha and mode), with no symlink flattened."""
        self.tree, self.held, self.dirs = tree, {}, set()
        self.dir_mode = os.lstat(self.path).st_mode
        newest = 0
        for name, st, sha, mode in made:
            path = os.fsdecode(name)
            self.held[path] = _Held((mode, sha), st)
            newest = max(newest, st.st_ctime_ns)
            while "/" in path:
                path = path.rsplit("/", 1)[0]
                self.dirs.add(path)
        self._racy_since(newest)
        self.flattened = ()

    def moved(self, path: Path) -> None:
        """The directory was renamed to `path` (what it holds is unchanged)."""
        self.path = Path(path)


def _same(full: str, st: os.stat_result, held: _Held) -> bool:
    """Whether the file at `full` holds what the tree wrote there."""
    if held.entry[0] == GITLINK_MODE:
        return True
    try:  # a flattened symlink's file holds its target: the same blob
        return blob_id(full, st) == held.entry[1]
    except SpecialFile:
        return False


class KeptTrees:
    """A pool of kept trees under `root`: `take` gives one holding a commit to one caller,
    `give_back` returns it for the next."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self._lock = threading.Lock()
        self._free: list[KeptTree] = []
        self._made = 0
        self._taken: dict[Path, KeptTree] = {}

    def take(self, repo: Repo, sha: str) -> ScratchTree:
        """A kept tree holding commit `sha`, the caller's until `give_back`. Raises
        GitError as `scratch_tree` does (the tree goes back to the pool, emptied)."""
        with self._lock:
            if self._free:
                kept = self._free.pop()
            else:
                kept = KeptTree(self.root / f"{KEPT_PREFIX}{self._made}")
                self._made += 1
        try:
            tree = kept.bring(repo, sha)
        except BaseException:
            with self._lock:
                self._free.append(kept)
            raise
        with self._lock:
            self._taken[tree.path] = kept
        return tree

    def give_back(self, tree: ScratchTree) -> None:
        """Return a tree `take` gave (safe twice)."""
        with self._lock:
            kept = self._taken.pop(tree.path, None)
            if kept is not None:
                self._free.append(kept)
