"""The Queen's checkout kept flat: branches of retired issues deleted, and packs holding
objects no ref reaches rewritten without them.

A repack walks every object reachable from the refs (and from a linked worktree's
detached HEAD), then rewrites only the packs that hold something unreachable: the
clone's own large pack, all reachable, is left as it is. An object whose pack was
written less than `grace_seconds` ago is kept whatever reaches it: a salvage or an
import lands its pack before it moves its branch, and runs beside this without the
checkout's lock. Objects are copied raw, never parsed, and one process rewrites packs at
a time (the fold's lock).
"""

from __future__ import annotations

import os
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path

from dulwich.objects import Commit, ObjectID, Tag, Tree
from dulwich.pack import Pack
from dulwich.refs import Ref
from dulwich.repo import Repo

from hive.git.packfiles import pack_of_raw
from hive.git.packindex import land_bytes
from hive.git.storing import folding
from hive.git.worktrees import WORKTREES_DIRNAME
from hive.rules.branches import BRANCH_PREFIX, branch_name

QUEEN_PREFIX = f"refs/heads/{BRANCH_PREFIX}".encode()
REPACK_GRACE_SECONDS = 3600.0


@dataclass(frozen=True)
class Repacked:
    """What one repack did: packs rewritten, objects dropped, and the pack bytes before
    and after. `skipped`: another process was rewriting packs."""

    packs_rewritten: int
    objects_dropped: int
    bytes_before: int
    bytes_after: int
    skipped: bool = False

    def __bool__(self) -> bool:
        return self.packs_rewritten > 0


def queen_branches(repo: Repo) -> list[int]:
    """The issues that have a `queen-<issue>` branch in `repo`."""
    found = []
    for ref in repo.refs.allkeys():
        if ref.startswith(QUEEN_PREFIX) and ref[len(QUEEN_PREFIX) :].isdigit():
            found.append(int(ref[len(QUEEN_PREFIX) :]))
    return sorted(found)


def delete_branches(repo: Repo, issues: list[int]) -> list[int]:
    """Delete `queen-<issue>` for each of `issues` that no linked worktree has checked
    out; the issues whose branch went."""
    checked_out = _worktree_heads(repo)
    gone = []
    for issue in issues:
        ref = Ref(f"refs/heads/{branch_name(issue)}".encode())
        if ref in checked_out or ref not in repo.refs:
            continue
        if repo.refs.remove_if_equals(ref, None):
            gone.append(issue)
    return gone


def pack_bytes(repo: Repo) -> int:
    """Bytes of the repository's packs and loose objects."""
    total = 0
    for root, _dirs, files in os.walk(Path(repo.object_store.path)):
        for name in files:
            total += os.lstat(os.path.join(root, name)).st_size
    return total


def repack(repo: Repo, grace_seconds: float = REPACK_GRACE_SECONDS) -> Repacked:
    """Rewrite the packs that hold unreachable objects older than the grace."""
    store = repo.object_store
    before = pack_bytes(repo)
    with folding(store) as held:
        if not held:
            return Repacked(0, 0, before, before, skipped=True)
        reachable = _reachable(repo)
        now = time.time()
        rewritten = dropped = 0
        for pack in list(store.packs):
            if now - _pack_path(pack).stat().st_mtime < grace_seconds:
                continue
            unreachable = [sha for sha in pack if sha not in reachable]
            if not unreachable:
                continue
            kept = [pack.get_raw(sha) for sha in pack if sha in reachable]
            if kept:
                land_bytes(store, pack_of_raw(kept))
            _remove(pack)
            rewritten += 1
            dropped += len(unreachable)
        store.packs  # noqa: B018 (reading it drops the removed packs from the store)
    return Repacked(rewritten, dropped, before, pack_bytes(repo))


def _reachable(repo: Repo) -> set[ObjectID]:
    store = repo.object_store
    roots: set[ObjectID] = set()
    for ref in repo.refs.allkeys():
        try:
            roots.add(repo.refs[ref])
        except KeyError:  # a broken symbolic ref reaches nothing
            continue
    roots |= _detached_heads(repo)
    seen: set[ObjectID] = set()
    todo = deque(roots)
    while todo:
        sha = todo.popleft()
        if sha in seen:
            continue
        seen.add(sha)
        try:
            obj = store[sha]
        except KeyError:  # a shallow clone's missing parent
            continue
        if isinstance(obj, Commit):
            todo.append(obj.tree)
            todo.extend(obj.parents)
        elif isinstance(obj, Tree):
            todo.extend(entry.sha for entry in obj.items() if entry.sha is not None)
        elif isinstance(obj, Tag):
            todo.append(obj.object[1])
    return seen


def _admin_heads(repo: Repo) -> list[str]:
    top = Path(repo.commondir()) / WORKTREES_DIRNAME
    if not top.is_dir():
        return []
    heads = []
    for admin in top.iterdir():
        head = admin / "HEAD"
        if head.is_file():
            heads.append(head.read_text().strip())
    return heads


def _worktree_heads(repo: Repo) -> set[Ref]:
    return {Ref(h[len("ref: ") :].encode()) for h in _admin_heads(repo) if h.startswith("ref: ")}


def _detached_heads(repo: Repo) -> set[ObjectID]:
    return {ObjectID(h.encode()) for h in _admin_heads(repo) if len(h) == 40}


def _pack_path(pack: Pack) -> Path:
    return Path(pack.index.path).with_suffix(".pack")  # type: ignore[attr-defined]


def _remove(pack: Pack) -> None:
    index = _pack_path(pack)
    for suffix in (".idx", ".pack", ".rev", ".bitmap"):
        index.with_suffix(suffix).unlink(missing_ok=True)
