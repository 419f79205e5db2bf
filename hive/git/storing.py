"""New objects and packs into a clone's store, and its small packs folded into one, as
`git gc --auto` does past its pack limit.

Every salvage, merge and import lands a pack of its own, and dulwich looks an object up
in each pack in turn: after a few dozen turns a runner's clone spends more time missing
in small packs than reading. Once SMALL_PACKS_MAX packs of at most SMALL_PACK_OBJECTS
objects are there, their objects are written whole into one new pack, and the small
ones are removed (the index first: only a pack with an index is read). One process
folds at a time (a lock file beside the packs; another finds it and leaves the work);
a reader that had a removed pack open keeps reading it (the file lives while it is
open), and one that had not yet opened it finds the objects in the new pack.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from dulwich.object_store import DiskObjectStore
from dulwich.objects import ShaFile
from dulwich.pack import Pack

from hive.git.packfiles import pack_of, pack_of_raw
from hive.git.packindex import Landed, land_bytes

SMALL_PACKS_MAX = 8
SMALL_PACK_OBJECTS = 5000
STALE_LOCK_SECONDS = 600
_LOCK = "hive-fold.lock"


def store_objects(store: DiskObjectStore, objects: Sequence[ShaFile]) -> None:
    """Add `objects` to `store` as one small pack of whole objects, then fold the small
    packs when there are enough of them. dulwich's own `add_objects` works out the name
    of every pack already in the store first (reading every id of a large one: a tenth
    of a second on a real history, each time)."""
    if objects:
        land_bytes(store, pack_of(objects))
        fold_small_packs(store)


def store_pack(store: DiskObjectStore, pack: bytes) -> Landed:
    """Land `pack` (thin or not) in `store`, then fold the small packs when there are
    enough of them. Raises PackError."""
    landed = land_bytes(store, pack)
    fold_small_packs(store)
    return landed


def fold_small_packs(store: DiskObjectStore) -> int:
    """Fold the store's small packs into one when there are SMALL_PACKS_MAX of them;
    how many were folded (0: too few, or another process is folding)."""
    small = [pack for pack in store.packs if len(pack) <= SMALL_PACK_OBJECTS]
    if len(small) < SMALL_PACKS_MAX:
        return 0
    lock = Path(store.pack_dir) / _LOCK
    if not _take(lock):
        return 0
    try:
        objects: dict[bytes, tuple[int, bytes]] = {}
        for pack in small:
            for sha in pack:  # raw bytes out, raw bytes in: nothing is parsed
                if sha not in objects:
                    objects[sha] = pack.get_raw(sha)
        land_bytes(store, pack_of_raw(list(objects.values())))
        for pack in small:
            _remove(pack)
        store.packs  # noqa: B018 (reading it drops the removed packs from the store)
        return len(small)
    finally:
        lock.unlink(missing_ok=True)


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


def _remove(pack: Pack) -> None:
    index = Path(pack.index.path)  # type: ignore[attr-defined]
    for suffix in (".idx", ".pack", ".rev", ".bitmap"):
        index.with_suffix(suffix).unlink(missing_ok=True)
