"""The two file formats a pack needs: a pack of whole objects, and the version 2 index
git reads beside every pack; and a pack of whole objects the hive made itself landed in
a store with its index written from what is known (`land_whole`), without reading the
pack back."""

from __future__ import annotations

import hashlib
import os
import struct
import sys
import tempfile
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


def land_whole(pack_dir: Path, objects: Sequence[tuple[bytes, int, bytes]]) -> Path:
    """Write `objects` ((binary id, type number, raw bytes) each, ids known to be right:
    the caller hashed them) as one pack of whole objects into `pack_dir`, its index
    written from the ids, offsets and checksums in hand, the pack moved in before its
    index (only a pack with an index is read). The pack's path; a pack the store holds
    already is left as it is. The caller makes the store read it (`store.packs`)."""
    parts = [b"PACK" + struct.pack(">LL", 2, len(objects))]
    offsets, crcs = array("Q"), array("I")
    at = len(parts[0])
    for _sha, type_num, raw in objects:
        entry = entry_header(type_num, len(raw)) + zlib.compress(raw, _FAST)
        offsets.append(at)
        crcs.append(zlib.crc32(entry))
        at += len(entry)
        parts.append(entry)
    data = b"".join(parts)
    checksum = hashlib.sha1(data).digest()
    name = f"pack-{checksum.hex()}"
    pack, index = pack_dir / f"{name}.pack", pack_dir / f"{name}.idx"
    if index.exists():
        return pack
    pack_dir.mkdir(parents=True, exist_ok=True)
    _write_new(pack, pack_dir, (data, checksum), 0o444)
    partial = pack_dir / f"tmp_idx_{name}"
    write_index(partial, len(objects), lambda i: objects[i][0], offsets, crcs, checksum)
    os.replace(partial, index)
    return pack


def _write_new(path: Path, directory: Path, parts: Sequence[bytes], mode: int) -> None:
    """Write `parts` into a temporary file in `directory`, then rename it to `path`."""
    fd, name = tempfile.mkstemp(dir=directory, prefix="tmp_pack_")
    try:
        with open(fd, "wb") as out:
            for part in parts:
                out.write(part)
            os.fchmod(out.fileno(), mode)
        os.replace(name, path)
    except BaseException:
        Path(name).unlink(missing_ok=True)
        raise


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


def read_entry_header(head: bytes) -> tuple[int, int, int]:
    """A pack entry's type, its size, and the length of its header at the start of
    `head` (the reverse of `entry_header`)."""
    byte = head[0]
    kind, size, shift, used = (byte >> 4) & 7, byte & 0x0F, 4, 1
    while byte & 0x80:
        byte = head[used]
        size |= (byte & 0x7F) << shift
        shift += 7
        used += 1
    return kind, size, used


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
