"""An object's size without reading it: from its pack entry's header, or, for a delta,
from the first bytes of the delta (which name the size of what it builds).

A merge asks before it reads three versions of a file both sides changed: a file
larger than the text merge takes is a conflict, and reading it whole first would cost
its size three times over in memory for nothing.
"""

from __future__ import annotations

import os
import zlib

from dulwich.object_store import BaseObjectStore, DiskObjectStore
from dulwich.objects import ObjectID, hex_to_sha

_OFS_DELTA = 6
_REF_DELTA = 7
_SHA_BYTES = 20
_HEAD_BYTES = 64  # an entry's header and base, and the start of its zlib stream
_DELTA_HEAD_BYTES = 20  # a delta's two sizes, ten bytes each at most


def object_size(store: BaseObjectStore, sha: bytes) -> int:
    """The size of object `sha` (hex) in `store`, read from its pack entry when it has
    one, else by reading the object. KeyError when the store lacks it."""
    if isinstance(store, DiskObjectStore):
        binary = hex_to_sha(ObjectID(sha))
        for pack in store.packs:
            try:
                offset = pack.index.object_offset(binary)
            except KeyError:
                continue
            with open(pack.data.path, "rb") as handle:
                return _entry_size(handle.fileno(), offset)
    _type, data = store.get_raw(ObjectID(sha))
    return len(data)


def _entry_size(fd: int, offset: int) -> int:
    head = os.pread(fd, _HEAD_BYTES, offset)
    kind, size, used = _varint_with_type(head)
    if kind not in (_OFS_DELTA, _REF_DELTA):
        return size
    if kind == _REF_DELTA:
        used += _SHA_BYTES
    else:
        while head[used] & 0x80:
            used += 1
        used += 1
    stream = os.pread(fd, _HEAD_BYTES, offset + used)
    start = zlib.decompressobj().decompress(stream, _DELTA_HEAD_BYTES)
    _base_size, at = _varint(start, 0)
    target_size, _at = _varint(start, at)
    return target_size


def _varint_with_type(head: bytes) -> tuple[int, int, int]:
    """A pack entry's type, size and header length."""
    byte = head[0]
    kind, size, shift, used = (byte >> 4) & 7, byte & 0x0F, 4, 1
    while byte & 0x80:
        byte = head[used]
        size |= (byte & 0x7F) << shift
        shift += 7
        used += 1
    return kind, size, used


def _varint(data: bytes, at: int) -> tuple[int, int]:
    """A size in a delta's header at `at`, and where it ends."""
    value = shift = 0
    while True:
        byte = data[at]
        value |= (byte & 0x7F) << shift
        shift += 7
        at += 1
        if not byte & 0x80:
            return value, at
