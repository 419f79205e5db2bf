"""Import a runner's bundle into the Queen's checkout as branch `queen-<issue>`.

`dulwich.bundle.Bundle.store_objects` cannot resolve the deltas of a bundle that has
prerequisites (its bases are outside the pack), for git's bundles and dulwich's alike.
The bundle's pack is therefore landed as what it is, a thin pack (`hive.git.packindex`):
completed with the bases the checkout already holds, it passes `git fsck --strict`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from dulwich.objects import Commit, ObjectID
from dulwich.repo import Repo

from hive.git.packindexer import PackError
from hive.git.repo import GitError, branch_ref, set_ref
from hive.git.storing import store_pack

_HEADERS = {b"# v2 git bundle\n": 2, b"# v3 git bundle\n": 3}
_PACK_HEADER_BYTES = 12


class BadBundle(GitError):
    """The bytes are not a bundle this import accepts; the message says why."""


class UnknownPrerequisite(GitError):
    """The checkout lacks a commit the bundle is built on (usually its base); `shas`
    names each one it lacks."""

    def __init__(self, message: str, shas: tuple[str, ...]) -> None:
        super().__init__(message)
        self.shas = shas


@dataclass(frozen=True)
class Imported:
    """The branch now at `head_sha`; `previous_sha` is what it pointed at before (None: a
    new branch); `changed` is False when the branch was already there."""

    branch: str
    head_sha: str
    previous_sha: str | None
    changed: bool


@dataclass(frozen=True)
class _Parsed:
    prerequisites: tuple[bytes, ...]
    refs: dict[bytes, bytes]
    pack: memoryview


def import_bundle(checkout: Repo, issue: int, bundle: bytes | Path) -> Imported:
    """Store the bundle's objects in `checkout` and point `queen-<issue>` at its head,
    replacing an older local branch. Raises BadBundle or UnknownPrerequisite."""
    ref = branch_ref(issue)
    data = Path(bundle).read_bytes() if isinstance(bundle, Path) else bundle
    parsed = parse(data)
    head = parsed.refs.get(ref)
    if head is None:
        carried = ", ".join(r.decode(errors="replace") for r in parsed.refs) or "no ref"
        raise BadBundle(f"the bundle carries {carried}, not {ref.decode()}")
    store = checkout.object_store
    missing = [sha for sha in parsed.prerequisites if ObjectID(sha) not in store]
    if missing:
        shas = ", ".join(sha.decode() for sha in missing)
        raise UnknownPrerequisite(
            f"{checkout.path} lacks the bundle's prerequisite commit {shas}: fetch base first",
            tuple(sha.decode() for sha in missing),
        )
    try:
        previous: bytes | None = checkout.refs[ref]
    except KeyError:
        previous = None
    if previous == head and ObjectID(head) in store:
        return Imported(ref.decode()[11:], head.decode(), head.decode(), False)
    if int.from_bytes(parsed.pack[8:12], "big") > 0:
        try:
            store_pack(checkout.object_store, parsed.pack)
        except PackError as err:
            raise BadBundle(f"the bundle's pack cannot be read: {err}") from err
    if not isinstance(_get(checkout, head), Commit):
        raise BadBundle(f"the bundle's head {head.decode()} is not a commit it carries")
    # rebuilt from the stored bundle after a crash: the ref needs no sync to disk
    set_ref(checkout, ref, ObjectID(head), synced=False)
    return Imported(ref.decode()[11:], head.decode(), previous.decode() if previous else None, True)


def _get(repo: Repo, sha: bytes) -> object:
    try:
        return repo.object_store[ObjectID(sha)]
    except KeyError:
        return None


def parse(data: bytes) -> _Parsed:
    """Split a v2 or v3 bundle into prerequisites, refs and pack bytes (a view of
    `data`: a large bundle is not copied)."""
    end = data.find(b"\n")
    if end < 0 or data[: end + 1] not in _HEADERS:
        raise BadBundle(f"not a git bundle (first line {data[: min(end, 40)]!r})")
    prerequisites: list[bytes] = []
    refs: dict[bytes, bytes] = {}
    at = end + 1
    while True:
        end = data.find(b"\n", at)
        if end < 0:
            raise BadBundle("the bundle ends inside its header")
        line = data[at:end]
        at = end + 1
        if not line:
            break
        if line.startswith(b"@"):
            if line.startswith(b"@object-format=") and line != b"@object-format=sha1":
                raise BadBundle(f"unsupported bundle {line[1:].decode(errors='replace')}")
            continue
        if line.startswith(b"-"):
            prerequisites.append(_sha(line[1:].split(b" ", 1)[0]))
            continue
        sha, _space, name = line.partition(b" ")
        refs[name] = _sha(sha)
    pack = memoryview(data)[at:]
    if len(pack) < _PACK_HEADER_BYTES or bytes(pack[:4]) != b"PACK":
        raise BadBundle("the bundle holds no pack after its header")
    return _Parsed(tuple(prerequisites), refs, pack)


def _sha(raw: bytes) -> bytes:
    if len(raw) != 40 or any(c not in b"0123456789abcdef" for c in raw):
        raise BadBundle(f"the bundle names {raw[:50]!r}, not an object id")
    return raw
