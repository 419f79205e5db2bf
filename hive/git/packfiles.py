"""The two file formats a pack needs: a pack of whole objects, and the version 2 index
git reads beside every pack."""

from __future__ import annotations

import hashlib
import struct
import sys
import zlib
from array import array
from collections.abc import Callable, Sequence
from pathlib import Path

from dulwich.objects import ShaFile

_IDX_MAGIC = b"\377tOc"
_LARGE_OFFSET = 1 << 31
_FAST = 1  # zlib level


def pack_of(objects: Sequence[ShaFile]) -> bytes:
    """A version 2 pack holding each of `objects` whole, with its checksum. Compressed
    fast (level 1), as git compresses the loose objects it writes for a commit: these
    packs are small and are folded into one later."""
    return pack_of_raw([(obj.type_num, obj.as_raw_string()) for obj in objects])


def pack_of_raw(objects: Sequence[tuple[int, bytes]]) -> bytes:
    """`pack_of` for objects given as (type number, raw bytes)."""
    parts = [b"PACK" + struct.pack(">LL", 2, len(objects))]
    for type_num, raw in objects:
        parts.append(entry_header(type_num, len(raw)) + zlib.compress(raw, _FAST))
    data = b"".join(parts)
    return data + hashlib.sha1(data).digest()


def entry_header(kind: int, size: int) -> bytes:
    """The header of a pack entry: its type and its size, seven bits a byte."""
    out = bytearray()
    byte = (kind << 4) | (size & 0x0F)
    size >>= 4
    while size:
        out.append(byte | 0x80)
        byte = size & 0x7F
        size >>= 7
    out.append(byte)
    return bytes(out)


def write_index(
    path: Path,
    count: int,
    sha_of: Callable[[int], bytes],
    entry_offsets: Sequence[int],
    entry_crcs: Sequence[int],
    checksum: bytes,
) -> None:
    """Write at `path` the version 2 index of a pack of `count` entries (entry `i` is
    object `sha_of(i)` at `entry_offsets[i]`, checksum `entry_crcs[i]`): fan-out, ids
    in order, checksums, offsets (large ones apart), then the pack's and its own."""
    order = sorted(range(count), key=sha_of)
    fanout = array("I", [0]) * 256
    shas = bytearray()
    crcs = array("I")
    offsets = array("I")
    large = array("Q")
    for i in order:
        sha = sha_of(i)
        fanout[sha[0]] += 1
        shas += sha
        crcs.append(entry_crcs[i])
        offset = entry_offsets[i]
        if offset < _LARGE_OFFSET:
            offsets.append(offset)
        else:
            offsets.append(_LARGE_OFFSET | len(large))
            large.append(offset)
    total = 0
    for byte in range(256):
        total += fanout[byte]
        fanout[byte] = total
    if sys.byteorder == "little":
        for table in (fanout, crcs, offsets, large):
            table.byteswap()
    digest = hashlib.sha1()
    with open(path, "wb") as out:
        for part in (
            _IDX_MAGIC + struct.pack(">L", 2),
            fanout.tobytes(),
            bytes(shas),
            crcs.tobytes(),
            offsets.tobytes(),
            large.tobytes(),
            checksum,
        ):
            digest.update(part)
            out.write(part)
        out.write(digest.digest())
