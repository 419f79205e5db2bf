"""Objects copied between two repositories on this machine: what one commit needs that
the target lacks, found by walking from that commit and stopping at what the target
holds, as git's quick fetch does.

dulwich's fetch and push between two local repositories negotiate as over the wire:
every commit of every ref on one side is walked to find what the other has, so each
runner's start (the base moved by the last merge) and each publish's push cost time
growing with the history: 55-60% of a runner's CPU and a quarter of the Queen's in
`hive bench publish`. After a merge the target lacks one or two commits, a few trees
and a blob or two, and this walk reads those alone.

It relies on what git relies on: an object the target holds has everything it reaches
there too (a pack lands whole; a thin pack only when its bases are here), so the walk
stops at a commit or a tree the target holds. Every object read is hashed against its
name. A source that lacks an object the walk needs (a shallow or damaged source), or a
walk that passes COPY_OBJECTS_MAX objects or COPY_BYTES_MAX bytes, gives None: the
caller fetches or pushes the ordinary way.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

from dulwich.object_store import DiskObjectStore
from dulwich.objects import Commit, ObjectID, ShaFile, Tag, Tree, object_header, parse_tree

from hive.git.packfiles import land_whole
from hive.git.storing import fold_small_packs

COPY_OBJECTS_MAX = 10_000  # past this the ordinary fetch's pack is the better way
COPY_BYTES_MAX = 64 << 20  # nor is a large file held whole in memory for a copy
_GITLINK = 0o160000  # a submodule's entry: its commit is in another repository
_SHA_BYTES = 20

Raw = tuple[bytes, int, bytes]  # binary id, type number, raw bytes
Has = Callable[[ObjectID], bool]
Read = Callable[[ObjectID], tuple[int, bytes]]


def lacking(read: Read, has: Has, tip: ObjectID) -> list[Raw] | None:
    """Every object reachable from `tip` that `has` says the target lacks, read by `read`
    (the source's `get_raw`) and checked against its name; None when the source lacks
    one, one does not match its name, or the walk grows past the bounds (see the
    module). Each object comes after every one it reaches: written one by one in this
    order, the objects a crash leaves in the target still reach only objects there,
    which the next walk relies on when it stops at one."""
    found: dict[ObjectID, Raw] = {}
    reached: dict[ObjectID, list[ObjectID]] = {}
    size = 0
    todo = [tip]
    while todo:
        sha = todo.pop()
        if sha in found or has(sha):
            continue
        try:
            type_num, raw = read(sha)
        except KeyError:
            return None
        if hashlib.sha1(object_header(type_num, len(raw)) + raw).hexdigest().encode() != sha:
            return None
        found[sha] = (bytes.fromhex(sha.decode()), type_num, raw)
        size += len(raw)
        if len(found) > COPY_OBJECTS_MAX or size > COPY_BYTES_MAX:
            return None
        reached[sha] = _reaches(sha, type_num, raw)
        todo.extend(reached[sha])
    return [found[sha] for sha in _after_what_they_reach(tip, reached)]


def _after_what_they_reach(
    tip: ObjectID, reached: dict[ObjectID, list[ObjectID]]
) -> list[ObjectID]:
    """The objects of `reached` (each with the objects it names), each after every one
    of them it reaches: a depth-first walk from `tip`, an object put out once all it
    names are (objects form no cycle)."""
    order: list[ObjectID] = []
    if tip not in reached:  # the target holds it
        return order
    seen = {tip}
    stack = [(tip, iter(reached[tip]))]
    while stack:
        sha, names = stack[-1]
        for name in names:
            if name in reached and name not in seen:
                seen.add(name)
                stack.append((name, iter(reached[name])))
                break
        else:
            stack.pop()
            order.append(sha)
    return order


def _reaches(sha: ObjectID, type_num: int, raw: bytes) -> list[ObjectID]:
    """The objects one object names: a commit's tree and parents, a tree's entries (not
    a submodule's commit, which lives in another repository), a tag's object."""
    if type_num == Commit.type_num:
        commit = ShaFile.from_raw_string(type_num, raw, sha)
        assert isinstance(commit, Commit)
        return [commit.tree, *commit.parents]
    if type_num == Tree.type_num:
        entries = parse_tree(raw, _SHA_BYTES)
        return [ObjectID(entry) for _name, mode, entry in entries if mode != _GITLINK]
    if type_num == Tag.type_num:
        tag = ShaFile.from_raw_string(type_num, raw, sha)
        assert isinstance(tag, Tag)
        return [tag.object[1]]
    return []


def land(store: DiskObjectStore, objects: list[Raw]) -> None:
    """Land `objects` in the clone's `store` as one pack of whole objects (nothing when
    there are none), then fold its small packs when there are enough of them."""
    if not objects:
        return
    land_whole(Path(store.pack_dir), objects)
    store.packs  # noqa: B018 (reading it adds the new pack to the store)
    fold_small_packs(store)
