"""The worktree's index file, read and written in a few bulk operations.

dulwich's `Index` decodes every entry into an object and back (about 30 ms for 2,000
entries, twice per salvage). The hive needs less: the stat data of an entry (its cache
for "is this file unchanged") and to replace a few entries. Entries are therefore kept
as their raw bytes, keyed by path, and written back as they came.

Versions 2 and 3 are read. Optional extensions (upper-case signatures: the cached tree,
the untracked cache, resolve-undo, ...) are dropped on write, as git allows; an index
with a mandatory one (split index, sparse directories) or version 4 is refused with a
clear error rather than rewritten wrongly.
"""

from __future__ import annotations

import hashlib
import os
import stat
import struct
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from hive.git.repo import GitError

_HEADER = struct.Struct(">4sLL")
_FIXED = struct.Struct(">LLLLLLLLLL20sH")  # ctime s/ns, mtime s/ns, dev, ino, mode,
# uid, gid, size, sha, flags
# of an entry's fixed part, what the stat cache compares: mtime s/ns, inode, mode,
# size, sha, flags
_STAT = struct.Struct(">8xLL4xLL8xL20sH")
_FLAGS = struct.Struct(">H")
_FLAGS_AT = _FIXED.size - 2
_EXTENDED_FLAG = 0x4000
_STAGE_MASK = 0x3000
_NAME_MASK = 0x0FFF
_TRAILER_BYTES = 20
_MASK_32 = 0xFFFFFFFF


@dataclass
class IndexFile:
    """Raw entries by path; a path in conflict holds several (one per stage)."""

    path: Path
    entries: dict[bytes, list[bytes]] = field(default_factory=dict)
    mtime_ns: int = 0

    def clean_shas(self, found: Sequence[tuple[bytes, os.stat_result]]) -> list[bytes | None]:
        """For each (name, lstat) in `found`, the sha (hex) of its stage-0 entry when the
        stat cache says the file is unchanged since: same size, mtime, inode and file
        type, and not changed in the instant the index was written ("racy git"). None
        otherwise, and for an absent entry or one in conflict: that file must be read.
        One pass with everything bound locally: it runs once per file of the tree."""
        get, unpack, racy = self.entries.get, _STAT.unpack_from, self.mtime_ns
        ifmt, mask, stage = stat.S_IFMT, _MASK_32, _STAGE_MASK
        out: list[bytes | None] = []
        for name, st in found:
            raws = get(name)
            if raws is None or len(raws) != 1:
                out.append(None)
                continue
            seconds, nanos, ino, mode, size, sha, flags = unpack(raws[0])
            mtime_ns = seconds * 1_000_000_000 + nanos
            clean = not (
                flags & stage
                or mtime_ns >= racy
                or mtime_ns != st.st_mtime_ns
                or size != st.st_size & mask
                or ino != st.st_ino & mask
                or ifmt(mode) != ifmt(st.st_mode)
            )
            out.append(sha.hex().encode() if clean else None)
        return out

    def set(self, name: bytes, st: os.stat_result, sha: bytes, mode: int) -> None:
        """Make `name` one stage-0 entry for the file `st` describes, holding `sha` (hex)."""
        self.entries[name] = [entry_bytes(name, st, sha, mode)]

    def remove(self, name: bytes) -> None:
        self.entries.pop(name, None)

    def write(self) -> None:
        """Write atomically (`index.lock`, then rename), as git does."""
        body = [_HEADER.pack(b"DIRC", 2, sum(len(v) for v in self.entries.values()))]
        for name in sorted(self.entries):
            for raw in self.entries[name]:
                pad = 8 - (len(raw) + len(name)) % 8
                body.append(raw + name + b"\0" * pad)
        data = b"".join(body)
        lock = self.path.with_name(self.path.name + ".lock")
        try:
            fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            raise GitError(f"{lock} exists: another git process is using this worktree") from None
        try:
            os.write(fd, data + hashlib.sha1(data).digest())
        finally:
            os.close(fd)
        os.replace(lock, self.path)


def entry_bytes(name: bytes, st: os.stat_result, sha: bytes, mode: int) -> bytes:
    """The fixed part of a version 2 entry (name and padding are added on write)."""
    return _FIXED.pack(
        int(st.st_ctime_ns // 1_000_000_000) & _MASK_32,
        st.st_ctime_ns % 1_000_000_000,
        int(st.st_mtime_ns // 1_000_000_000) & _MASK_32,
        st.st_mtime_ns % 1_000_000_000,
        st.st_dev & _MASK_32,
        st.st_ino & _MASK_32,
        mode,
        st.st_uid & _MASK_32,
        st.st_gid & _MASK_32,
        st.st_size & _MASK_32,
        bytes.fromhex(sha.decode()),
        min(len(name), _NAME_MASK),
    )


def read_index(path: Path) -> IndexFile:
    """The index at `path`; an empty one when the file does not exist."""
    try:
        data = path.read_bytes()
        mtime_ns = path.stat().st_mtime_ns
    except FileNotFoundError:
        return IndexFile(path)
    signature, version, count = _HEADER.unpack_from(data)
    if signature != b"DIRC" or version not in (2, 3):
        raise GitError(f"{path}: index version {version} is not supported (2 and 3 are)")
    entries: dict[bytes, list[bytes]] = {}
    at = _HEADER.size
    flags_of, find = _FLAGS.unpack_from, data.index
    for _ in range(count):
        (flags,) = flags_of(data, at + _FLAGS_AT)
        fixed = _FIXED.size + (2 if flags & _EXTENDED_FLAG else 0)
        end = find(b"\0", at + fixed)
        name = data[at + fixed : end]
        raw = data[at : at + fixed]
        if flags & _EXTENDED_FLAG:
            # version 3 extended flags (intent-to-add, skip-worktree) are git's own
            # bookkeeping; written back as version 2 they are cleared
            raw = raw[: _FIXED.size - 2] + struct.pack(">H", flags & ~_EXTENDED_FLAG)
        known = entries.get(name)
        if known is None:
            entries[name] = [raw]
        else:
            known.append(raw)
        at += ((fixed + len(name)) // 8 + 1) * 8
    while at < len(data) - _TRAILER_BYTES:
        signature, size = struct.unpack_from(">4sL", data, at)
        if not b"A"[0] <= signature[0] <= b"Z"[0]:
            raise GitError(
                f"{path}: index extension {signature!r} (split or sparse index) is not "
                "supported: turn off core.splitIndex and index.sparse in this worktree"
            )
        at += 8 + size
    return IndexFile(path, entries, mtime_ns)
