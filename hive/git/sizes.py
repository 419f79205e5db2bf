"""An object's size without reading it: from its pack entry's header, or, for a delta,
from the first bytes of the delta (which name the size of what it builds); and a large
object stored whole in a pack read a slice at a time (`read_stream`).

A merge asks before it reads three versions of a file both sides changed: a file
larger than the text merge takes is a conflict, and reading it whole first would cost
its size three times over in memory for nothing. A checkout and a bundle read a large
file a slice at a time, never holding it (dulwich's `get_raw` holds it about three
times over at its peak).
"""

from __future__ import annotations

import os
import zlib
from collections.abc import Iterable, Iterator
from typing import BinaryIO

from dulwich.object_store import BaseObjectStore, DiskObjectStore
from dulwich.objects import ObjectID, hex_to_sha
from dulwich.pack import PackFileDisappeared

from hive.git.packfiles import read_entry_header

_OFS_DELTA = 6
_REF_DELTA = 7
_SHA_BYTES = 20
_HEAD_BYTES = 64  # an entry's header and base, and the start of its zlib stream
_DELTA_HEAD_BYTES = 20  # a delta's two sizes, ten bytes each at most
STREAM_MIN_BYTES = 1 << 20  # a smaller object is read whole, as dulwich reads it
_SLICE = 1 << 20


def object_size(store: BaseObjectStore, sha: bytes) -> int:
    """The size of object `sha` (hex) in `store`, read from its pack entry when it has
    one, else by reading the object. KeyError when the store lacks it."""
    found = _in_pack(store, sha)
    if found is not None:
        handle, offset = found
        with handle:
            return _entry_size(handle.fileno(), offset)
    _type, data = store.get_raw(ObjectID(sha))
    return len(data)


def read_stream(store: BaseObjectStore, sha: bytes) -> tuple[int, int, Iterable[bytes]]:
    """(type number, size, the bytes in slices) of object `sha` (hex): an object of
    STREAM_MIN_BYTES or more stored whole in a pack is inflated a slice at a time as the
    slices are taken; any other is read whole, in one slice. KeyError when it is absent."""
    found = _in_pack(store, sha)
    if found is not None:
        handle, offset = found
        head = os.pread(handle.fileno(), _HEAD_BYTES, offset)
        kind, size, used = read_entry_header(head)
        if kind not in (_OFS_DELTA, _REF_DELTA) and size >= STREAM_MIN_BYTES:
            return kind, size, _inflated(handle, offset + used, size)
        handle.close()
    type_num, data = store.get_raw(ObjectID(sha))
    return type_num, len(data), (data,)


def _in_pack(store: BaseObjectStore, sha: bytes) -> tuple[BinaryIO, int] | None:
    """The open pack file holding object `sha` (hex) and its entry's offset there, or
    None (not in a pack listed now). A pack another process folded away since the list
    was read is passed over (dulwich says PackFileDisappeared, or the file is gone):
    its objects are in the pack the fold wrote, which `get_raw` finds. The file is open
    before it is read, so a fold after that takes nothing from under the reader."""
    if not isinstance(store, DiskObjectStore):
        return None
    binary = hex_to_sha(ObjectID(sha))
    for pack in store.packs:
        try:
            offset = pack.index.object_offset(binary)
            return open(pack.data.path, "rb"), offset
        except KeyError:
            continue
        except (PackFileDisappeared, FileNotFoundError):
            continue
    return None


def _inflated(handle: BinaryIO, at: int, size: int) -> Iterator[bytes]:
    """The `size` bytes of the zlib stream at `at` of the open pack file `handle`, a
    slice at a time, closing it at the end; OSError when the stream does not hold
    them."""
    inflater = zlib.decompressobj()
    seen = 0
    path = handle.name
    with handle:
        fd = handle.fileno()
        while not inflater.eof:
            piece = os.pread(fd, _SLICE, at)
            at += len(piece)
            if not piece:
                out = inflater.flush()
                seen += len(out)
                yield out
                break
            while piece and not inflater.eof:
                out = inflater.decompress(piece, _SLICE)
                seen += len(out)
                yield out
                piece = inflater.unconsumed_tail
    if seen != size or not inflater.eof:
        raise OSError(f"{path}: an entry says {size} bytes and inflates to {seen}")


def _entry_size(fd: int, offset: int) -> int:
    head = os.pread(fd, _HEAD_BYTES, offset)
    kind, size, used = read_entry_header(head)
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
