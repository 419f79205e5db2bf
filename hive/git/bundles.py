"""The bundle of `base..queen-<issue>`: how a runner's work leaves without a push.

Written here rather than by `dulwich.bundle.create_bundle_from_repo`, which walks every
tree reachable from base to find what to leave out and stores each object whole. The
objects of a range are found by comparing each new commit's tree with its parent's,
descending only into subtrees that changed; a changed blob or tree is stored as a delta
against the version it replaced (a thin pack, as `git bundle create` writes), so ten
small commits on a large tree cost a few kilobytes. The delta is `hive.git.delta`'s,
linear in the sizes; an object over DELTA_MAX_BYTES travels whole. Each entry is
compressed in slices and the bundle's size is checked as it grows, so a bundle over
the limit is refused as soon as it is, not once it is all built.
"""

from __future__ import annotations

import hashlib
import os
import stat
import tempfile
import zlib
from collections.abc import Iterable
from dataclasses import dataclass

from dulwich.objects import Blob, Commit, ObjectID, Tree, hex_to_sha
from dulwich.pack import REF_DELTA, pack_object_header
from dulwich.repo import Repo

from hive.errors import HiveError
from hive.git.delta import DELTA_MAX_BYTES, create_delta
from hive.git.repo import GitError, branch_ref, resolve
from hive.git.sizes import read_stream
from hive.rules.branches import branch_name

BUNDLE_HEADER = b"# v2 git bundle\n"
# Deltas: bases older than this chain length are not used (git's default depth), and
# a delta is kept only when it saves at least a quarter of the object.
MAX_DELTA_DEPTH = 50
DELTA_KEEP_RATIO = 0.75
MIN_DELTA_BYTES = 64
_COMPRESS_SLICE = 1 << 20  # bytes compressed at once, the size checked after each
SPILL_BYTES = 4 << 20  # a bundle larger than this is written to a temporary file first


class BundleTooLarge(HiveError):
    """The bundle is over `HIVE_BUNDLE_MAX_BYTES`; the message names the limit and how
    far the bundle had got when it was stopped."""


@dataclass(frozen=True)
class BundleOut:
    """A bundle of `base..queen-<issue>` (`data`), the base it needs and the head it
    carries, and how many commits it holds."""

    data: bytes
    base_sha: str
    head_sha: str
    commits: int


def bundle(repo: Repo, issue: int, base: str, max_bytes: int) -> BundleOut | None:
    """The bundle of `base..queen-<issue>`, or None when the branch has no commit beyond
    base. Raises BundleTooLarge over `max_bytes`, GitError for a missing branch or base."""
    ref = branch_ref(issue)
    if ref not in repo.refs:
        raise GitError(f"{repo.path} has no branch {branch_name(issue)}")
    head = repo.refs[ref]
    base_sha = ObjectID(resolve(repo, base).encode())
    commits = [entry.commit for entry in repo.get_walker(include=[head], exclude=[base_sha])]
    if not commits:
        return None
    commits.reverse()  # parents before children, so a delta base is always written first
    in_range = {commit.id for commit in commits}
    prerequisites: dict[bytes, bytes] = {}
    for commit in commits:
        for parent in commit.parents:
            if parent not in in_range and parent not in prerequisites:
                prerequisites[parent] = _subject(repo, parent)
    header = [BUNDLE_HEADER]
    header += [b"-" + sha + b" " + subject + b"\n" for sha, subject in prerequisites.items()]
    header.append(head + b" " + ref + b"\n\n")
    out = _Out(branch_name(issue), max_bytes)
    out.write(b"".join(header), hashed=False)
    _pack(repo, commits, out)
    return BundleOut(out.data(), base_sha.decode(), head.decode(), len(commits))


class _Out:
    """The bundle as it is written: its bytes (past SPILL_BYTES in a temporary file, so
    a large bundle is held once at the end, not as its slices and their join), the
    pack's checksum so far, and its size held to `max_bytes` (BundleTooLarge the moment
    it is over)."""

    def __init__(self, branch: str, max_bytes: int) -> None:
        self.branch, self.max_bytes = branch, max_bytes
        self.file = tempfile.SpooledTemporaryFile(max_size=SPILL_BYTES)  # noqa: SIM115
        self.size = 0
        self.digest = hashlib.sha1()

    def write(self, chunk: bytes, *, hashed: bool = True) -> None:
        self.file.write(chunk)
        self.size += len(chunk)
        if hashed:
            self.digest.update(chunk)
        if self.size > self.max_bytes:
            self.file.close()
            raise BundleTooLarge(
                f"bundle of {self.branch} is over the limit of {self.max_bytes} bytes "
                f"(HIVE_BUNDLE_MAX_BYTES): stopped at {self.size} bytes written"
            )

    def data(self) -> bytes:
        """The bundle's bytes, made once (a buffered `read()` gathers slices and joins
        them: twice the size)."""
        with self.file:
            self.file.flush()
            if self.size <= SPILL_BYTES:
                self.file.seek(0)
                return self.file.read()
            fd = self.file.fileno()
            data = os.pread(fd, self.size, 0)
            if len(data) != self.size:  # a short read: not seen on a regular file
                data += os.pread(fd, self.size - len(data), len(data))
            return data


def _subject(repo: Repo, sha: bytes) -> bytes:
    commit = repo.object_store[ObjectID(sha)]
    assert isinstance(commit, Commit)
    subject: bytes = commit.message.split(b"\n", 1)[0]
    return subject


@dataclass
class _Planned:
    sha: bytes
    type_num: int
    base: bytes | None  # the object it replaced, a candidate delta base


def _plan(repo: Repo, commits: list[Commit]) -> list[_Planned]:
    """Every object the range adds, in write order, each with the object it replaced."""
    planned: list[_Planned] = []
    seen: set[bytes] = set()
    for commit in commits:
        planned.append(_Planned(commit.id, Commit.type_num, None))
        seen.add(commit.id)
        parent_tree = None
        if commit.parents:
            parent = repo.object_store[commit.parents[0]]
            assert isinstance(parent, Commit)
            parent_tree = parent.tree
        _diff(repo, commit.tree, parent_tree, planned, seen)
    return planned


def _diff(
    repo: Repo, new: bytes, old: bytes | None, planned: list[_Planned], seen: set[bytes]
) -> None:
    if new == old:
        return
    if new not in seen:
        seen.add(new)
        planned.append(_Planned(new, Tree.type_num, old))
    store = repo.object_store
    new_tree = store[ObjectID(new)]
    assert isinstance(new_tree, Tree)
    before: dict[bytes, tuple[int, bytes]] = {}
    if old is not None:
        old_tree = store[ObjectID(old)]
        assert isinstance(old_tree, Tree)
        before = {name: (mode, sha) for name, mode, sha in old_tree.iteritems()}
    for name, mode, sha in new_tree.iteritems():
        prior = before.get(name)
        if prior is not None and prior[1] == sha:
            continue
        if stat.S_ISDIR(mode):
            prior_tree = prior[1] if prior is not None and stat.S_ISDIR(prior[0]) else None
            _diff(repo, sha, prior_tree, planned, seen)
        elif (stat.S_ISLNK(mode) or stat.S_ISREG(mode)) and sha not in seen:
            seen.add(sha)
            same_kind = prior is not None and stat.S_IFMT(prior[0]) == stat.S_IFMT(mode)
            planned.append(_Planned(sha, Blob.type_num, prior[1] if same_kind and prior else None))
        # gitlinks name commits of another repository: nothing to carry


def _pack(repo: Repo, commits: list[Commit], out: _Out) -> None:
    planned = _plan(repo, commits)
    out.write(b"PACK" + (2).to_bytes(4, "big") + len(planned).to_bytes(4, "big"))
    members = {item.sha for item in planned}
    depth: dict[bytes, int] = {}  # of each object written, 0 when whole
    for item in planned:
        # a base must be written already or stay outside the pack: a base written later
        # could itself be a delta on this object (a change and its revert), a cycle
        usable = item.base is not None and (item.base in depth or item.base not in members)
        _entry(repo, item, depth, usable, out)
    out.write(out.digest.digest(), hashed=False)


def _entry(repo: Repo, item: _Planned, depth: dict[bytes, int], usable: bool, out: _Out) -> None:
    depth[item.sha] = 0
    type_num, size, slices = read_stream(repo.object_store, item.sha)
    if size > DELTA_MAX_BYTES or not usable or item.base is None:
        _write_entry(repo, out, type_num, None, size, slices)  # whole, read as it is written
        return
    data = b"".join(slices)
    body, header_type, base = data, type_num, None
    if len(data) >= MIN_DELTA_BYTES:
        base_depth = depth.get(item.base, 0)
        if base_depth < MAX_DELTA_DEPTH:
            _base_type, base_data = repo.object_store.get_raw(ObjectID(item.base))
            if len(base_data) <= DELTA_MAX_BYTES:
                delta = create_delta(base_data, data)
                if len(delta) < len(data) * DELTA_KEEP_RATIO:
                    body, header_type, base = delta, REF_DELTA, hex_to_sha(ObjectID(item.base))
                    depth[item.sha] = base_depth + 1
    _write_entry(repo, out, header_type, base, len(body), (body,))


def _write_entry(
    repo: Repo, out: _Out, kind: int, base: bytes | None, size: int, slices: Iterable[bytes]
) -> None:
    """A pack entry: its header, then its bytes compressed a slice at a time."""
    out.write(bytes(pack_object_header(kind, base, size, repo.object_format)))
    squeeze = zlib.compressobj()
    for piece in slices:
        view = memoryview(piece)
        for at in range(0, len(piece), _COMPRESS_SLICE):
            out.write(squeeze.compress(view[at : at + _COMPRESS_SLICE]))
    out.write(squeeze.flush())
