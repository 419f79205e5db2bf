"""Push a new base tip to `HIVE_REPO_URL`, compare-and-swap on the old one.

The push lands only while the remote branch still points at the sha the caller merged
onto. Over the wire the remote's advertisement is read first and the update command
carries the old sha, which the git server checks again under its own ref lock; into a
local path (or `file://`) dulwich updates the ref with `set_if_equals` under the ref's
lock file. Either way a pusher that lost the race gets `Moved` with the branch's new
sha and merges again onto it; two pushes never lose one another.

The URL is checked (`check_url`) and never appears in an error or a log line with its
user or password (`origin_of`).
"""

from __future__ import annotations

import logging
import os
import tempfile
import time
import zlib
from collections.abc import Callable, Iterator, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from pathlib import Path

from dulwich.client import GitClient, LocalGitClient
from dulwich.errors import NotGitRepository
from dulwich.file import FileLocked
from dulwich.object_store import DiskObjectStore
from dulwich.objects import ObjectID, object_header
from dulwich.pack import UnpackedObject
from dulwich.protocol import ZERO_SHA
from dulwich.refs import Ref, check_ref_format
from dulwich.repo import Repo

from hive.git.auth import GitAuth, transport
from hive.git.localcopy import lacking
from hive.git.packfiles import land_whole
from hive.git.repo import GitError, origin_of, why
from hive.git.safety import check_url

log = logging.getLogger("hive.git")

# A refusal that left the branch at the old sha (another pusher held the ref's lock) is
# tried again this many times, pausing RETRY_PAUSE_SECONDS, doubled each time.
PUSH_TRIES = 6
RETRY_PAUSE_SECONDS = 0.01
UNPACK_LIMIT = 100  # git's transfer.unpackLimit: fewer objects are written loose
# A ref's lock file in a repository on this machine older than this was left by a writer
# killed mid-update (a ref write takes milliseconds): it is removed and the push goes on.
STALE_LOCK_SECONDS = 10.0


class PushError(GitError):
    """The remote refused the push or could not be reached, and not because the branch
    moved; the message names the remote without its credentials."""


@dataclass(frozen=True)
class Pushed:
    """The remote branch now points at `sha` (also when it already did)."""

    sha: str


@dataclass(frozen=True)
class Moved:
    """The remote branch is no longer at the old sha: it is at `remote_sha` (None: the
    branch is gone). Nothing was changed; fetch it and merge again."""

    remote_sha: str | None


PushResult = Pushed | Moved


def push(
    repo: Repo,
    url: str,
    branch: str,
    new_sha: str,
    old_sha: str | None,
    *,
    auth: GitAuth | None = None,
) -> PushResult:
    """Set `refs/heads/<branch>` of `url` to commit `new_sha` of `repo` if, and only if,
    it is at `old_sha` (None: only if the branch does not exist yet), sending the
    objects the remote lacks. `auth`'s token goes to the forge's git host in the
    Authorization header only (never in the URL, never elsewhere: `hive.git.auth`).
    Raises PushError, or UnsafeGitError for a refused URL."""
    check_url(url)
    ref = Ref(f"refs/heads/{branch}".encode())
    if not check_ref_format(ref):
        raise PushError(f"{branch!r} is not a valid branch name")
    new = ObjectID(new_sha.encode("ascii"))
    if new not in repo.object_store:
        raise PushError(f"{repo.path} has no commit {new_sha}")
    old = None if old_sha is None else ObjectID(old_sha.encode("ascii"))
    where = origin_of(url)
    client, text_path = transport(url, auth)
    path = text_path.encode()

    # into a repository on this machine, what the new tip needs there is copied first
    # (`hive.git.localcopy`) and the push itself sends nothing: dulwich would walk both
    # histories to find it, a quarter of the Queen's time in `hive bench publish`
    copied = isinstance(client, LocalGitClient) and _copy_local(repo, text_path, new)

    def pack_data(
        have: AbstractSet[ObjectID],
        want: AbstractSet[ObjectID],
        *,
        ofs_delta: bool = False,
        progress: Callable[[bytes], None] | None = None,
    ) -> tuple[int, Iterator[UnpackedObject]]:
        if copied:
            return 0, iter(())
        return repo.generate_pack_data(set(have), set(want), ofs_delta=ofs_delta)

    pause = RETRY_PAUSE_SECONDS
    refusal = ""
    seen: list[ObjectID | None] = []  # the branch as each try's advertisement showed it

    def update_refs(refs: Mapping[Ref, ObjectID]) -> dict[Ref, ObjectID]:
        current = refs.get(ref)
        seen.append(current)
        return {ref: new} if current == old else {}

    for _ in range(PUSH_TRIES):
        seen.clear()
        try:
            result = client.send_pack(path, update_refs, pack_data)
            status = (result.ref_status or {}).get(ref)
        except FileLocked:
            status = "the ref is locked by another update"
            if isinstance(client, LocalGitClient) and _remove_stale_lock(text_path, ref):
                continue
        except Exception as err:  # dulwich raises many kinds; the caller needs one line
            raise PushError(f"cannot push {branch} to {where}: {why(err, url, auth)}") from err
        current = seen[-1] if seen else _remote_sha(client, path, ref, where, url, auth)
        if status is None and current == old:
            return Pushed(new_sha)
        if status is not None:
            refusal = why(Exception(str(status)), url, auth)
            current = _remote_sha(client, path, ref, where, url, auth)
        if current == new:
            return Pushed(new_sha)  # landed before, by this push's earlier try or twin
        if current != old:
            return Moved(None if current is None else current.decode("ascii"))
        time.sleep(pause)
        pause *= 2
    raise PushError(f"{where} refused {branch} -> {new_sha}: {refusal}")


def _remove_stale_lock(path: str, ref: Ref) -> bool:
    """Remove `ref`'s lock file in the repository at `path` when it is older than
    STALE_LOCK_SECONDS (its writer was killed: nothing else would ever remove it, and
    every push after would be refused); whether one was removed."""
    try:
        with Repo(path) as target:
            lock = Path(os.fsdecode(target.refs.refpath(ref)) + ".lock")  # type: ignore[attr-defined]
        age = time.time() - lock.stat().st_mtime
        if age < STALE_LOCK_SECONDS:
            return False
        lock.unlink()
    except (NotGitRepository, OSError):
        return False
    log.warning("removed %s, a lock %.0f s old left by a killed writer", lock, age)
    return True


def _remote_sha(
    client: GitClient, path: bytes, ref: Ref, where: str, url: str, auth: GitAuth | None
) -> ObjectID | None:
    try:
        refs = client.get_refs(path).refs
    except Exception as err:  # as in push
        raise PushError(f"cannot read the branches of {where}: {why(err, url, auth)}") from err
    sha = refs.get(ref)
    return None if sha is None or sha == ZERO_SHA else sha


def _copy_local(repo: Repo, path: str, tip: ObjectID) -> bool:
    """Whether the repository at `path` holds `tip` with all it reaches, once what it
    lacks is copied from `repo`: as loose objects when there are at most UNPACK_LIMIT
    (git's receive-pack does the same, so the remote gains no small pack a push), else
    as one pack. False (nothing written) when it cannot be copied that way: the push
    sends a pack as before."""
    try:
        with Repo(path) as target:
            store = target.object_store
            objects = lacking(repo.object_store.get_raw, store.__contains__, tip)
            if objects is None:
                return False
            assert isinstance(store, DiskObjectStore)
            if len(objects) > UNPACK_LIMIT:
                land_whole(Path(store.pack_dir), objects)
                return True
            for sha, type_num, raw in objects:  # each after all it names (see lacking)
                _write_loose(Path(store.path), sha.hex(), type_num, raw)
    except (NotGitRepository, OSError):
        return False
    return True


def _write_loose(objects: Path, sha: str, type_num: int, raw: bytes) -> None:
    """Write one loose object as git does: into a file of its own name first, renamed
    into place, so a writer killed mid-write leaves a stray temporary file and never a
    lock in the object's name (dulwich's `add_object` writes `<sha>.lock`, and one left
    by a killed Queen refused that object to every later push). Not synced, as dulwich
    and git leave loose objects by default."""
    final = objects / sha[:2] / sha[2:]
    if final.exists():
        return
    final.parent.mkdir(exist_ok=True)
    fd, name = tempfile.mkstemp(dir=final.parent, prefix="tmp_obj_")
    try:
        with open(fd, "wb") as out:
            out.write(zlib.compress(object_header(type_num, len(raw)) + raw))
        os.chmod(name, 0o444)
        os.replace(name, final)
    except BaseException:
        Path(name).unlink(missing_ok=True)
        raise
