"""Index a received pack and move it into the object store, as `git index-pack` does.

dulwich lands a fetched pack in three passes over every object: it copies the stream
while inflating it, indexes it by resolving each delta chain again from its start, then
inflates every object once more to check it. On a real history (112,000 objects, two
gigabytes once inflated, delta chains 50 deep) that is half a minute and 150 MB. Here
the pack is read from its file (mapped, not held) in two passes: the first inflates each
entry once, hashes whole objects and notes which delta hangs on which base; the second
walks each base's tree of deltas depth first, so every delta is inflated and applied
once, on a base still in hand. Bases held along one chain are capped at
BASES_HELD_BYTES; past it the oldest are dropped and rebuilt when their next child
needs them.

A thin pack (deltas on bases outside it, as a fetch brings) is completed with those
bases from the object store, appended whole, so the pack stands alone as git requires.
The pack is named after its checksum, as git names it, and goes in before its index:
only a pack with an index is read.
"""

from __future__ import annotations

import hashlib
import os
import struct
import tempfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from dulwich.object_store import DiskObjectStore
from dulwich.objects import RawObjectID

from hive.git.packfiles import entry_header, write_index
from hive.git.packindexer import SHA_BYTES, GetExternal, Indexer, PackError


@dataclass(frozen=True)
class Landed:
    """The pack now in the store: its path, how many objects it holds, and how many of
    them were bases appended to complete a thin pack."""

    path: Path
    objects: int
    appended: int


def land_pack(received: Path, pack_dir: Path, get_external: GetExternal) -> Landed:
    """Index the pack file `received` (in `pack_dir`, so a rename moves it in), complete
    it when it is thin, and move it and its index into place. Raises PackError; the
    received file is removed either way."""
    try:
        with open(received, "r+b") as handle:
            indexer = Indexer(handle)
            try:
                indexer.first_pass()
                indexer.resolve(get_external)
            except (zlib.error, IndexError, struct.error) as err:
                raise PackError(f"the pack is damaged: {err}") from err
            appended = _complete(handle, indexer, get_external)
            checksum = _checksum(handle)
        name = f"pack-{checksum.hex()}"
        pack = pack_dir / f"{name}.pack"
        index = pack_dir / f"{name}.idx"
        if index.exists():
            received.unlink()  # the store holds this very pack already
            return Landed(pack, indexer.count, appended)
        os.chmod(received, 0o444)
        os.replace(received, pack)
        partial = pack_dir / f"tmp_idx_{name}"
        write_index(partial, indexer.count, indexer.sha, indexer.offsets, indexer.crcs, checksum)
        os.replace(partial, index)
        return Landed(pack, indexer.count, appended)
    finally:
        received.unlink(missing_ok=True)


def land_bytes(store: DiskObjectStore, pack: bytes | memoryview) -> Landed:
    """Land the pack `pack` (thin or not) in `store`, which reads it at once."""
    pack_dir = Path(store.pack_dir)
    pack_dir.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(dir=pack_dir, prefix="tmp_pack_")
    with open(fd, "wb") as out:
        out.write(pack)
    landed = land_pack(Path(name), pack_dir, store.get_raw)
    store.packs  # noqa: B018 (reading it adds the new pack to the store)
    return landed


def _complete(handle: BinaryIO, indexer: Indexer, get_external: GetExternal) -> int:
    """Append the outside bases a thin pack used, whole, and renew its header's count
    and its checksum; how many were appended."""
    if not indexer.external:
        return 0
    handle.seek(indexer.end)
    handle.truncate()
    at = indexer.end
    for sha in indexer.external:
        kind, data = get_external(RawObjectID(sha))
        entry = entry_header(kind, len(data)) + zlib.compress(data)
        handle.write(entry)
        indexer.offsets.append(at)
        indexer.crcs.append(zlib.crc32(entry))
        indexer.shas += sha
        at += len(entry)
    indexer.count += len(indexer.external)
    handle.seek(8)
    handle.write(struct.pack(">L", indexer.count))
    handle.flush()
    digest = hashlib.sha1()
    handle.seek(0)
    while chunk := handle.read(1 << 20):
        digest.update(chunk)
    handle.write(digest.digest())
    handle.flush()
    return len(indexer.external)


def _checksum(handle: BinaryIO) -> bytes:
    handle.seek(-SHA_BYTES, os.SEEK_END)
    return handle.read(SHA_BYTES)
