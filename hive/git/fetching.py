"""Fetch one branch into the clone, its pack written straight to disk and indexed by
`hive.git.packindex` (dulwich's own landing holds the pack in memory and reads it three
times).

The clone's haves are every ref it holds (dulwich offers only `refs/heads`, and a
runner's clone may have none: each refresh would then bring the whole history again).
A fetch with `depth` makes or deepens a shallow clone, recorded in its `shallow` file as
git records it. The server is asked for the one branch (protocol v2's ref prefix, as
git's single-branch clone asks): a forge's mirror would otherwise advertise all its refs,
ten thousand pull requests and tags for a real project, each parsed and held.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from dulwich.client import GitClient
from dulwich.object_store import ObjectStoreGraphWalker
from dulwich.objects import ObjectID
from dulwich.refs import Ref
from dulwich.repo import Repo

from hive.git.packindex import Landed, land_pack
from hive.git.storing import fold_small_packs

_WRITE_BUFFER_BYTES = 1 << 20
INFINITE_DEPTH = 0x7FFFFFFF  # git's depth for all of it: the clone is shallow no more
# a shallow clone missing an older commit of base deepens by these, all of it last
DEEPEN_STEPS = (64, 1024, INFINITE_DEPTH)


@dataclass(frozen=True)
class Fetched:
    """The branch's sha as the remote advertised it (None: no such branch), and the pack
    that landed (None: nothing was missing)."""

    sha: ObjectID | None
    landed: Landed | None


def fetch_branch(
    repo: Repo,
    client: GitClient,
    path: str,
    ref: Ref,
    *,
    depth: int | None = None,
    again: bool = False,
) -> Fetched:
    """Fetch `ref` of the repository at `path` (through `client`) into `repo`'s objects;
    no ref of `repo` is moved. `depth` limits the history to that many commits from the
    tip; `again` asks for the tip even when it is here (to deepen a shallow clone).
    Raises what dulwich raises for the transport, PackError for a bad pack."""
    advertised: list[ObjectID | None] = []
    store = repo.object_store

    def want(refs: Mapping[Ref, ObjectID], depth: int | None = None) -> list[ObjectID]:
        sha = refs.get(ref)
        advertised.append(sha)
        if sha is None or (sha in store and not again):
            return []
        return [sha]

    pack_dir = Path(store.pack_dir)
    pack_dir.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(dir=pack_dir, prefix="tmp_pack_")
    received = Path(name)
    try:
        with open(fd, "wb", buffering=_WRITE_BUFFER_BYTES) as sink:
            result = client.fetch_pack(
                path,
                want,
                _walker(repo),
                sink.write,
                depth=depth,
                ref_prefix=[ref],
            )
        if result.object_format not in (None, "sha1"):
            raise ValueError(f"the remote's objects are {result.object_format}; sha1 only")
        landed = None
        if received.stat().st_size:
            landed = land_pack(received, pack_dir, store.get_raw)
            store.packs  # noqa: B018 (reading it adds the new pack to the store)
            fold_small_packs(store)
        if result.new_shallow or result.new_unshallow:
            repo.update_shallow(result.new_shallow, result.new_unshallow)
    finally:
        received.unlink(missing_ok=True)
    sha = advertised[-1] if advertised else result.refs.get(ref)
    return Fetched(sha, landed)


def deepen(repo: Repo, client: GitClient, path: str, ref: Ref, wanted: Sequence[bytes]) -> bool:
    """Deepen the shallow clone's history of `ref` by DEEPEN_STEPS until it holds every
    commit in `wanted` (an older base a bundle is built on, say); whether it does. Raises
    what `fetch_branch` raises."""
    store = repo.object_store
    for depth in DEEPEN_STEPS:
        if all(ObjectID(sha) in store for sha in wanted):
            return True
        fetch_branch(repo, client, path, ref, depth=depth, again=True)
    return all(ObjectID(sha) in store for sha in wanted)


def _walker(repo: Repo) -> ObjectStoreGraphWalker:
    """The graph walker offering every commit a ref of `repo` names."""
    heads = sorted({sha for sha in repo.refs.as_dict().values() if sha in repo.object_store})
    return repo.get_graph_walker(heads=heads)


def is_shallow(repo: Repo) -> bool:
    return os.path.exists(os.path.join(repo.commondir(), "shallow"))
