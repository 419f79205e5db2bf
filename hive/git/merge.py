"""Merge a branch head into the base tip, with dulwich alone (no git binary, no hook, no
merge driver, nothing signed).

`merge` writes objects and moves no ref: the caller pushes the result (`push`). When
base has not moved since the branch left it, the result is the head itself (a
fast-forward). Otherwise the trees are merged three ways against the merge base, path
by path:

- a path one side changed (content, mode, added or deleted) takes that side;
- a path both sides changed alike takes it;
- a regular file both sides changed differently is merged line by line
  (`textmerge`) when both are text and the file mode merges too;
- anything else is a conflict: both sides added different files at one path, one
  deleted what the other changed, a file became a directory on one side only, a
  symlink or submodule both changed, a binary file both changed, a file both changed
  that is over `text_max_bytes` (HIVE_MERGE_TEXT_MAX_BYTES: its size is read from its
  pack entry, the file is never read) or changed in too many lines to compare in
  bounded time (`linediff`); these two say why in the conflict's `reasons`.

With several merge bases (criss-cross history) the bases are merged first into a
virtual base, as git's recursive strategy does; a conflict there is a conflict.
dulwich's own `dulwich.merge` is not used: it reports a conflict when only one side
changed a file's mode, and writes conflict markers into merged blobs.
"""

from __future__ import annotations

import stat
from dataclasses import dataclass

from dulwich.graph import find_merge_base
from dulwich.objects import Blob, Commit, ObjectID, ShaFile, Tree
from dulwich.repo import Repo

from hive.git.repo import GitError
from hive.git.sizes import object_size
from hive.git.storing import store_objects
from hive.git.textmerge import TooDifferent, is_text, merge_text

# The author and committer of every merge commit the hive makes unless told otherwise.
MERGE_IDENTITY = b"hive <hive@localhost>"
# Criss-cross merge bases are merged into a virtual base at most this deep.
MAX_VIRTUAL_DEPTH = 8
# The largest file merged line by line when both sides changed it (HIVE_MERGE_TEXT_MAX_BYTES).
MERGE_TEXT_MAX_BYTES = 8 << 20

_FILE_MODES = frozenset({0o100644, 0o100755})

Entry = tuple[int, bytes]  # (mode, hex sha)


@dataclass(frozen=True)
class Merged:
    """The merge landed as commit `sha` (objects written, no ref moved).
    `fast_forward`: `sha` is an existing commit, no merge commit was made: the head
    itself when base had not moved, or the base when it already holds the head."""

    sha: str
    fast_forward: bool


@dataclass(frozen=True)
class Conflict:
    """The branch cannot be merged without a person: `paths` (repository paths, sorted)
    were changed on both sides in ways that do not combine. No commit was made.
    `reasons`: a sentence for each path refused for its size or its changes' count."""

    paths: tuple[str, ...]
    reasons: tuple[str, ...] = ()


MergeResult = Merged | Conflict


def merge(
    repo: Repo,
    base_sha: str,
    head_sha: str,
    message: str,
    when: int,
    *,
    author: bytes = MERGE_IDENTITY,
    text_max_bytes: int = MERGE_TEXT_MAX_BYTES,
) -> MergeResult:
    """Merge commit `head_sha` into commit `base_sha` of `repo`.

    A merge commit has parents (base, head), `author` as author and committer, the time
    `when` (seconds since the epoch, UTC) and `message`. The same arguments give the
    same sha. A file both sides changed is merged line by line up to `text_max_bytes`.
    Raises GitError when a sha is not a commit of `repo` or the two share no
    history."""
    base, head = _commit(repo, base_sha), _commit(repo, head_sha)
    bases = find_merge_base(repo, [base.id, head.id])
    if not bases:
        raise GitError(f"{head_sha} shares no history with {base_sha}: nothing to merge onto")
    if head.id in bases:
        return Merged(base_sha, fast_forward=True)
    if base.id in bases:
        return Merged(head_sha, fast_forward=True)
    merger = _TreeMerger(repo, text_max_bytes)
    ancestor = merger.base_tree(bases, 0)
    if ancestor is None:
        return merger.conflict()
    tree = merger.trees(ancestor, base.tree, head.tree, "")
    if merger.conflicts:
        return merger.conflict()
    commit = Commit()
    commit.tree = ObjectID(tree or _empty_tree(merger))
    commit.parents = [base.id, head.id]
    commit.author = commit.committer = author
    commit.author_time = commit.commit_time = when
    commit.author_timezone = commit.commit_timezone = 0
    text = message if message.endswith("\n") else message + "\n"
    commit.message = text.encode("utf-8")
    merger.written.append(commit)
    store_objects(repo.object_store, merger.written)
    return Merged(commit.id.decode("ascii"), fast_forward=False)


def _commit(repo: Repo, sha: str) -> Commit:
    try:
        obj = repo.object_store[ObjectID(sha.encode("ascii"))]
    except (KeyError, ValueError, UnicodeEncodeError):
        obj = None
    if not isinstance(obj, Commit):
        raise GitError(f"{repo.path} has no commit {sha!r}")
    return obj


def _empty_tree(merger: _TreeMerger) -> bytes:
    tree = Tree()
    merger.written.append(tree)
    return tree.id


class _TreeMerger:
    """One merge's working state: the objects it made (written only when it is clean)
    and the conflicting paths it found."""

    def __init__(self, repo: Repo, text_max_bytes: int) -> None:
        self.repo = repo
        self.store = repo.object_store
        self.text_max_bytes = text_max_bytes
        self.written: list[ShaFile] = []
        self.made: dict[bytes, ShaFile] = {}
        self.conflicts: list[str] = []
        self.reasons: list[str] = []

    def conflict(self) -> Conflict:
        return Conflict(tuple(sorted(self.conflicts)), tuple(self.reasons))

    def base_tree(self, bases: list[ObjectID], depth: int) -> bytes | None:
        """The tree to merge against: the one merge base's, or the merge of several
        (None, with `conflicts` set, when they do not merge)."""
        tree: bytes = _commit(self.repo, bases[0].decode()).tree
        if depth > MAX_VIRTUAL_DEPTH:
            raise GitError(f"merge bases nest deeper than {MAX_VIRTUAL_DEPTH}: merge by hand")
        for other in bases[1:]:
            under = find_merge_base(self.repo, [bases[0], other])
            ancestor = self.base_tree(under, depth + 1) if under else None
            if self.conflicts:
                return None
            merged = self.trees(ancestor, tree, _commit(self.repo, other.decode()).tree, "")
            if self.conflicts:
                return None
            tree = merged or _empty_tree(self)
        return tree

    def trees(self, base: bytes | None, ours: bytes, theirs: bytes, prefix: str) -> bytes | None:
        """The merged tree's sha (None for an empty result), conflicts noted."""
        if ours == theirs or theirs == base:
            return ours
        if ours == base:
            return theirs
        b, o, t = self._entries(base), self._entries(ours), self._entries(theirs)
        merged: dict[bytes, Entry] = {}
        for name in sorted(b.keys() | o.keys() | t.keys()):
            entry = self._path(prefix, name, b.get(name), o.get(name), t.get(name))
            if entry is not None:
                merged[name] = entry
        if not merged:
            return None
        tree = Tree()
        for name, (mode, sha) in merged.items():
            tree.add(name, mode, ObjectID(sha))
        self._made(tree)
        return tree.id

    def _path(
        self, prefix: str, name: bytes, b: Entry | None, o: Entry | None, t: Entry | None
    ) -> Entry | None:
        """The entry `name` takes in the merged tree (None: absent)."""
        if o == t or t == b:
            return o
        if o == b:
            return t
        path = prefix + name.decode("utf-8", "surrogateescape")
        if o is not None and t is not None and _is_dir(o) and _is_dir(t):
            under = b[1] if b is not None and _is_dir(b) else None
            sha = self.trees(under, o[1], t[1], path + "/")
            return None if sha is None else (o[0], sha)
        if o is None or t is None or (b is not None and b[0] not in _FILE_MODES):
            self.conflicts.append(path)  # deleted against changed, or a special base
            return o
        mode = _merge_mode(b[0] if b else None, o[0], t[0])
        if mode is None or b is None:
            self.conflicts.append(path)  # mode clash, a type change, or two additions
            return o
        sha = self._blob(path, b[1], o[1], t[1])
        if sha is None:
            self.conflicts.append(path)
            return o
        return (mode, sha)

    def _blob(self, path: str, base: bytes, ours: bytes, theirs: bytes) -> bytes | None:
        if ours == theirs or theirs == base:
            return ours
        if ours == base:
            return theirs
        largest = max(self._size(sha) for sha in (base, ours, theirs))
        if largest > self.text_max_bytes:
            self.reasons.append(
                f"{path} is {largest} bytes, over the {self.text_max_bytes} bytes a line-by-line "
                "merge takes (HIVE_MERGE_TEXT_MAX_BYTES)"
            )
            return None
        data = [self._raw(sha) for sha in (base, ours, theirs)]
        if not all(is_text(d) for d in data):
            return None
        try:
            text = merge_text(*data)
        except TooDifferent:
            self.reasons.append(f"{path} changed in too many lines to merge line by line")
            return None
        if text is None:
            return None
        blob = Blob.from_string(text)
        self._made(blob)
        return blob.id

    def _made(self, obj: ShaFile) -> None:
        if obj.id not in self.made:
            self.made[obj.id] = obj
            self.written.append(obj)

    def _size(self, sha: bytes) -> int:
        made = self.made.get(sha)
        if made is not None:
            return len(made.as_raw_string())
        return object_size(self.store, sha)

    def _raw(self, sha: bytes) -> bytes:
        made = self.made.get(sha)
        if made is not None:
            return made.as_raw_string()
        _kind, data = self.store.get_raw(ObjectID(sha))
        return data

    def _entries(self, sha: bytes | None) -> dict[bytes, Entry]:
        if sha is None:
            return {}
        tree = self.made.get(sha) or self.store[ObjectID(sha)]
        if not isinstance(tree, Tree):
            raise GitError(f"{sha.decode()} is not a tree")
        return {name: (mode, hexsha) for name, mode, hexsha in tree.iteritems()}


def _is_dir(entry: Entry) -> bool:
    return stat.S_ISDIR(entry[0])


def _merge_mode(base: int | None, ours: int, theirs: int) -> int | None:
    """The merged mode of a regular file, or None: a clash, or not a regular file."""
    if ours not in _FILE_MODES or theirs not in _FILE_MODES:
        return None
    if ours == theirs or theirs == base:
        return ours
    if ours == base:
        return theirs
    return None
