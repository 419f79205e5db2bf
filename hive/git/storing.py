"""New objects and packs into a clone's store, and its small packs folded into one, as
`git gc --auto` does past its pack limit.

Every salvage, merge and import lands a pack of its own, and dulwich looks an object up
in each pack in turn: after a few dozen turns a runner's clone spends more time missing
in small packs than reading. Once SMALL_PACKS_MAX packs of at most SMALL_PACK_OBJECTS
objects (and SMALL_PACK_BYTES: a large file's pack is left as it is) are there, their
objects are written whole into one new pack, and the small ones are removed (the index
first: only a pack with an index is read). One process folds at a time (a lock file
beside the packs; another finds it and leaves the work); a reader that had a removed
pack open keeps reading it (the file lives while it is open), and one that had not yet
opened it finds the objects in the new pack. `store_files` lands files as blobs read a
slice at a time, for the large ones.
"""

from __future__ import annotations

import hashlib
import os
import stat
import tempfile
import time
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from dulwich.object_store import DiskObjectStore
from dulwich.objects import ShaFile
from dulwich.pack import Pack, PackFileDisappeared

from hive.git.packfiles import entry_header, land_whole, pack_of_raw
from hive.git.packindex import Landed, land_bytes, land_pack

SMALL_PACKS_MAX = 8
SMALL_PACK_OBJECTS = 5000
SMALL_PACK_BYTES = 16 << 20  # a pack larger than this (a large file's) is never folded
_SLICE = 1 << 20  # bytes of a file read, hashed and compressed at once
_BLOB = 3
_FAST = 1  # zlib level, as pack_of uses
STALE_LOCK_SECONDS = 600
_LOCK = "hive-fold.lock"


def store_objects(store: DiskObjectStore, objects: Sequence[ShaFile]) -> None:
    """Add `objects` to `store` as one small pack of whole objects, then fold the small
    packs when there are enough of them. dulwich's own `add_objects` works out the name
    of every pack already in the store first (reading every id of a large one: a tenth
    of a second on a real history, each time)."""
    if objects:
        whole = [(obj.sha().digest(), obj.type_num, obj.as_raw_string()) for obj in objects]
        land_whole(Path(store.pack_dir), whole)
        store.packs  # noqa: B018 (reading it adds the new pack to the store)
        fold_small_packs(store)


def store_pack(store: DiskObjectStore, pack: bytes | memoryview) -> Landed:
    """Land `pack` (thin or not) in `store`, then fold the small packs when there are
    enough of them. Raises PackError."""
    landed = land_bytes(store, pack)
    fold_small_packs(store)
    return landed


def fold_small_packs(store: DiskObjectStore) -> int:
    """Fold the store's small packs into one when there are SMALL_PACKS_MAX of them;
    how many were folded (0: too few, or another process is folding)."""
    if len(small_packs(store.packs)) < SMALL_PACKS_MAX:
        return 0
    lock = Path(store.pack_dir) / _LOCK
    if not _take(lock):
        return 0
    try:
        # listed again under the lock: a fold that ended a moment ago removed some
        small = small_packs(store.packs)
        if len(small) < SMALL_PACKS_MAX:
            return 0
        objects: dict[bytes, tuple[int, bytes]] = {}
        for pack in small:
            for sha in pack:  # raw bytes out, raw bytes in: nothing is parsed
                if sha not in objects:
                    objects[sha] = pack.get_raw(sha)
        landed = land_bytes(store, pack_of_raw(list(objects.values())))
        for pack in small:
            # the fold may come out as one of the packs it read, byte for byte (a pack
            # landed again after an earlier fold, its objects all there already): kept
            if Path(pack.index.path).with_suffix(".pack") != landed.path:  # type: ignore[attr-defined]
                _remove(pack)
        store.packs  # noqa: B018 (reading it drops the removed packs from the store)
        return len(small)
    finally:
        lock.unlink(missing_ok=True)


def small_packs(packs: Iterable[Pack]) -> list[Pack]:
    """The small ones of `packs`; a pack another thread folded away since the list was
    read is passed over (its objects are in the pack that fold wrote)."""
    small = []
    for pack in packs:
        try:
            if len(pack) <= SMALL_PACK_OBJECTS and _pack_bytes(pack) <= SMALL_PACK_BYTES:
                small.append(pack)
        except (PackFileDisappeared, FileNotFoundError):
            continue
    return small


class FileChanged(OSError):
    """A file came out shorter than its size when it was opened: it changed meanwhile."""


def store_files(store: DiskObjectStore, paths: Sequence[str]) -> list[bytes]:
    """Store each file at `paths` as a blob, in one new pack written as the files are
    read (a slice at a time: a 200 MB file costs a few MB of memory, not several times
    its size); the hex id of each, in order: the id of the bytes read, which are the
    bytes stored. Raises FileChanged when a file shrank while it was read."""
    pack_dir = Path(store.pack_dir)
    pack_dir.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(dir=pack_dir, prefix="tmp_pack_")
    shas: list[bytes] = []
    try:
        with open(fd, "wb") as out:
            digest = hashlib.sha1()

            def put(chunk: bytes) -> None:
                out.write(chunk)
                digest.update(chunk)

            put(b"PACK" + (2).to_bytes(4, "big") + len(paths).to_bytes(4, "big"))
            for path in paths:
                shas.append(_write_blob(path, put))
            out.write(digest.digest())
    except BaseException:
        Path(name).unlink(missing_ok=True)
        raise
    land_pack(Path(name), pack_dir, store.get_raw)
    store.packs  # noqa: B018 (reading it adds the new pack to the store)
    return shas


def _write_blob(path: str, put: Callable[[bytes], None]) -> bytes:
    # never through a link, never waiting on a writer: only a regular file is read
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    with open(fd, "rb") as handle:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise FileChanged(f"{path} is no longer a regular file")
        size = st.st_size
        blob = hashlib.sha1(b"blob %d\0" % size)
        squeeze = zlib.compressobj(_FAST)
        put(entry_header(_BLOB, size))
        left = size
        while left:
            piece = handle.read(min(_SLICE, left))
            if not piece:
                raise FileChanged(
                    f"{path} shrank while it was stored: {left} of {size} bytes unread"
                )
            left -= len(piece)
            blob.update(piece)
            put(squeeze.compress(piece))
        put(squeeze.flush())
    return blob.hexdigest().encode()


@contextmanager
def folding(store: DiskObjectStore) -> Iterator[bool]:
    """Hold the fold's lock while inside (the value says whether it was had): a repack
    rewrites packs too, and two rewriters must not remove each other's packs."""
    lock = Path(store.pack_dir) / _LOCK
    held = _take(lock)
    try:
        yield held
    finally:
        if held:
            lock.unlink(missing_ok=True)


def _take(lock: Path) -> bool:
    try:
        os.close(os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
        return True
    except FileExistsError:
        pass
    try:
        stale = time.time() - lock.stat().st_mtime > STALE_LOCK_SECONDS
    except FileNotFoundError:
        stale = True
    if stale:  # its process died folding: the packs are whole either way
        lock.unlink(missing_ok=True)
        return _take_once(lock)
    return False


def _take_once(lock: Path) -> bool:
    try:
        os.close(os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
    except FileExistsError:
        return False
    return True


def _pack_bytes(pack: Pack) -> int:
    index = Path(pack.index.path)  # type: ignore[attr-defined]
    try:
        return index.with_suffix(".pack").stat().st_size
    except FileNotFoundError:
        return 0


def _remove(pack: Pack) -> None:
    index = Path(pack.index.path)  # type: ignore[attr-defined]
    for suffix in (".idx", ".pack", ".rev", ".bitmap"):
        index.with_suffix(suffix).unlink(missing_ok=True)
