"""The entries of one received pack, read from its file in two passes (see
`hive.git.packindex`, which lands the pack): the first inflates each entry once, hashes
the whole objects and hangs each delta on its base; the second walks each base's tree of
deltas depth first and gives every delta its object id. A raise is a PackError.
"""

from __future__ import annotations

import bisect
import hashlib
import os
import struct
import zlib
from array import array
from collections.abc import Callable
from dataclasses import dataclass
from typing import BinaryIO

from dulwich.objects import RawObjectID
from dulwich.pack import apply_delta

from hive.git.packfiles import read_entry_header

BASES_HELD_BYTES = 16 << 20
_OFS_DELTA = 6
_REF_DELTA = 7
_TYPE_NAMES = {1: b"commit", 2: b"tree", 3: b"blob", 4: b"tag"}
SHA_BYTES = 20
_HEADER_BYTES = 12
_LONGEST_HEAD = 32  # type and size (10 bytes for any size) and an offset or id
_READ_BYTES = 1 << 20
_NO_CHILD = -1

# (type number, raw bytes) of an object outside the pack by its binary id, or KeyError
GetExternal = Callable[[RawObjectID], tuple[int, bytes]]


class PackError(Exception):
    """The pack cannot be indexed (damaged, truncated, or a delta's base is nowhere)."""


class Indexer:
    """The entries of one pack: offsets, checksums and object ids in compact arrays."""

    def __init__(self, handle: BinaryIO) -> None:
        fileno = handle.fileno()
        size = os.fstat(fileno).st_size
        if size < _HEADER_BYTES + SHA_BYTES:
            raise PackError(f"the pack is {size} bytes, too short to be one")
        self.fd = fileno
        self.end = size - SHA_BYTES
        magic, version, count = struct.unpack_from(">4sLL", os.pread(fileno, _HEADER_BYTES, 0))
        if magic != b"PACK" or version not in (2, 3):
            raise PackError(f"not a version 2 or 3 pack (starts {magic!r})")
        if _file_sha(fileno, self.end) != os.pread(fileno, SHA_BYTES, self.end):
            raise PackError("the pack's checksum does not match its contents")
        self.count = count
        self.offsets = array("Q")  # of each entry
        self.data_at = array("Q")  # of its zlib stream
        self.crcs = array("I")
        self.shas = bytearray(SHA_BYTES * count)
        self.types = bytearray(count)  # 0 until known; a delta gets its base's type
        self.first_child = array("i", [_NO_CHILD]) * count
        self.next_sibling = array("i", [_NO_CHILD]) * count
        # a ref delta's base id -> its first child; the rest follow by next_sibling
        # (a delta hangs on one base, by offset or by id): one int a base, not a list
        self.ref_first: dict[bytes, int] = {}
        self.whole = array("i")  # entries that are whole objects: where walks start
        self.resolved = 0
        self.external: list[bytes] = []  # the bases taken from outside, in use order

    def first_pass(self) -> None:
        """Read every entry once: where it is, its checksum, and for a whole object its
        type and id; a delta is hung on its base."""
        at = _HEADER_BYTES
        for i in range(self.count):
            self.offsets.append(at)
            head = os.pread(self.fd, _LONGEST_HEAD, at)
            kind, size, used = read_entry_header(head)
            if kind == _OFS_DELTA:
                distance, used = _ofs_distance(head, used)
                base = self._index_at(at - distance)
                self.next_sibling[i] = self.first_child[base]
                self.first_child[base] = i
            elif kind == _REF_DELTA:
                base_ref = head[used : used + SHA_BYTES]
                used += SHA_BYTES
                self.next_sibling[i] = self.ref_first.get(base_ref, _NO_CHILD)
                self.ref_first[base_ref] = i
            elif kind not in _TYPE_NAMES:
                raise PackError(f"entry {i} at {at} has unknown type {kind}")
            if kind in _TYPE_NAMES:  # hashed as it inflates: never held whole
                after = self._hash_entry(i, kind, at + used, size)
                self.whole.append(i)
            else:
                _delta, after = self._inflate(at + used, size, None)
            self.data_at.append(at + used)
            self.crcs.append(_file_crc(self.fd, at, after))
            at = after
        if at != self.end:
            raise PackError(f"the pack has {self.end - at} bytes after its last entry")

    def _inflate(self, at: int, size: int, span: int | None) -> tuple[bytes, int]:
        """The `size` bytes inflated from the zlib stream at `at` (`span` bytes long
        when known), and where the stream ends."""
        inflater = zlib.decompressobj()
        # deflate never grows data by more than a few bytes in a thousand
        step = span if span is not None else size + (size >> 9) + 64
        pieces = []
        while True:
            piece = os.pread(self.fd, min(step, self.end - at), at)
            if not piece:
                raise PackError(f"the pack ends inside the entry data at {at}")
            pieces.append(inflater.decompress(piece))
            if inflater.eof:
                at += len(piece) - len(inflater.unused_data)
                break
            at += len(piece)
            step = 1 << 16
        data = pieces[0] if len(pieces) == 1 else b"".join(pieces)
        if len(data) != size:
            raise PackError(f"an entry says {size} bytes and inflates to {len(data)}")
        return data, at

    def _hash_entry(self, i: int, kind: int, at: int, size: int) -> int:
        """Give whole entry `i` its id, inflating its zlib stream at `at` a slice at a
        time; where the stream ends."""
        inflater = zlib.decompressobj()
        digest = hashlib.sha1(b"%s %d\0" % (_TYPE_NAMES[kind], size))
        seen = 0
        while not inflater.eof:
            piece = os.pread(self.fd, min(_READ_BYTES, self.end - at), at)
            if not piece:  # what zlib still holds, or the pack is cut short
                out = inflater.flush()
                digest.update(out)
                seen += len(out)
                if not inflater.eof:
                    raise PackError(f"the pack ends inside the entry data at {at}")
                break
            start = at
            while piece and not inflater.eof:
                out = inflater.decompress(piece, _READ_BYTES)
                digest.update(out)
                seen += len(out)
                if inflater.eof:
                    # what follows the stream: at the end of a call cut short by its
                    # output bound it is in unconsumed_tail too, so only this counts
                    at = start + len(piece) - len(inflater.unused_data)
                    break
                at = start + len(piece) - len(inflater.unconsumed_tail)
                start, piece = at, inflater.unconsumed_tail
        if seen != size:
            raise PackError(f"an entry says {size} bytes and inflates to {seen}")
        self.shas[i * SHA_BYTES : (i + 1) * SHA_BYTES] = digest.digest()
        self.types[i] = kind
        self.resolved += 1
        return at

    def inflate_entry(self, i: int) -> bytes:
        """The inflated data of entry `i` (for a delta, the delta itself)."""
        at = self.data_at[i]
        after = self.offsets[i + 1] if i + 1 < len(self.offsets) else self.end
        _kind, size, _used = read_entry_header(os.pread(self.fd, _LONGEST_HEAD, self.offsets[i]))
        data, _end = self._inflate(at, size, after - at)
        return data

    def _index_at(self, offset: int) -> int:
        base = bisect.bisect_left(self.offsets, offset)
        if base == len(self.offsets) or self.offsets[base] != offset:
            raise PackError(f"a delta names a base at {offset}, where no entry starts")
        return base

    def _found(self, i: int, kind: int, data: bytes) -> None:
        digest = hashlib.sha1(b"%s %d\0" % (_TYPE_NAMES[kind], len(data)))
        digest.update(data)
        self.shas[i * SHA_BYTES : (i + 1) * SHA_BYTES] = digest.digest()
        self.types[i] = kind
        self.resolved += 1

    def sha(self, i: int) -> bytes:
        return bytes(self.shas[i * SHA_BYTES : (i + 1) * SHA_BYTES])

    def resolve(self, get_external: GetExternal) -> None:
        """Give every delta its object id, walking from each whole object; then from
        the bases outside the pack, for a thin one."""
        for i in self.whole:
            if self.first_child[i] != _NO_CHILD or (
                self.ref_first and self.sha(i) in self.ref_first
            ):
                self._walk(i, self.types[i], None)
        for base in list(self.ref_first):
            if base not in self.ref_first:
                continue  # resolved meanwhile, as the child of an outside base
            try:
                kind, data = get_external(RawObjectID(base))
            except KeyError:
                raise PackError(
                    f"a delta's base {base.hex()} is in neither the pack nor the store"
                ) from None
            self.external.append(base)
            self._walk(None, kind, data, base)
        if self.resolved != self.count:
            raise PackError(f"{self.count - self.resolved} deltas could not be resolved")

    def _children(self, i: int | None, sha: bytes) -> list[int]:
        kids = []
        child = self.ref_first.pop(sha, _NO_CHILD)
        while child != _NO_CHILD:
            kids.append(child)
            child = self.next_sibling[child]
        if i is not None:
            child = self.first_child[i]
            while child != _NO_CHILD:
                kids.append(child)
                child = self.next_sibling[child]
        return kids

    def _walk(self, root: int | None, kind: int, data: bytes | None, sha: bytes = b"") -> None:
        """Resolve every delta under `root` (an entry, or None for an outside base with
        `data` and `sha`), depth first."""
        if root is not None:
            sha = self.sha(root)
        frames = [_Frame(root, data, self._children(root, sha))]
        held = len(data) if data is not None else 0
        while frames:
            frame = frames[-1]
            if not frame.kids:
                held -= len(frame.data) if frame.data is not None else 0
                frames.pop()
                continue
            child = frame.kids.pop()
            if frame.data is None:
                frame.data = self._rebuild(frames, len(frames) - 1)
                held += len(frame.data)
            target = _apply(frame.data, self.inflate_entry(child))
            self._found(child, kind, target)
            kids = self._children(child, self.sha(child))
            if kids:
                frames.append(_Frame(child, target, kids))
                held += len(target)
                # an outside base (no entry) stays: it cannot be read again from the pack
                bottom = 0 if root is not None else 1
                while held > BASES_HELD_BYTES and bottom < len(frames) - 1:
                    dropped = frames[bottom].data
                    if dropped is not None:
                        held -= len(dropped)
                        frames[bottom].data = None
                    bottom += 1

    def _rebuild(self, frames: list[_Frame], k: int) -> bytes:
        """The data of frame `k`, from the nearest frame below that still holds its own."""
        frame = frames[k]
        if frame.data is not None:
            return frame.data
        assert frame.entry is not None  # an outside base is never dropped
        if k == 0:
            return self.inflate_entry(frame.entry)
        return _apply(self._rebuild(frames, k - 1), self.inflate_entry(frame.entry))


@dataclass(slots=True)
class _Frame:
    """One object on the walk's path: its entry (None for a base from outside), its
    data (None once dropped to stay under the cap) and its children still to do."""

    entry: int | None
    data: bytes | None
    kids: list[int]


def _apply(base: bytes, delta: bytes) -> bytes:
    out = apply_delta(base, delta)
    return out if isinstance(out, bytes) else b"".join(out)


def _ofs_distance(head: bytes, used: int) -> tuple[int, int]:
    byte = head[used]
    distance = byte & 0x7F
    used += 1
    while byte & 0x80:
        byte = head[used]
        distance = ((distance + 1) << 7) | (byte & 0x7F)
        used += 1
    return distance, used


def _file_sha(fd: int, end: int) -> bytes:
    digest = hashlib.sha1()
    at = 0
    while at < end:
        chunk = os.pread(fd, min(_READ_BYTES, end - at), at)
        if not chunk:
            break
        digest.update(chunk)
        at += len(chunk)
    return digest.digest()


def _file_crc(fd: int, start: int, end: int) -> int:
    crc = 0
    while start < end:
        chunk = os.pread(fd, min(_READ_BYTES, end - start), start)
        crc = zlib.crc32(chunk, crc)
        start += len(chunk)
    return crc
