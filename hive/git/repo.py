"""The hive's own clone of `HIVE_REPO_URL`, opened once per process.

The clone is bare (`<workdir>/repo.git`): nobody works in its main tree, every bee gets a
worktree beside it. Base is kept as `refs/remotes/origin/<base>` and refreshed by a fetch
of that one branch; the `queen-*` branches live in the clone itself.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlsplit, urlunsplit

from dulwich.client import LocalGitClient, get_transport_and_path
from dulwich.errors import NotGitRepository
from dulwich.file import FileLocked, GitFile
from dulwich.objects import Commit, ObjectID
from dulwich.refs import SYMREF, DiskRefsContainer, Ref
from dulwich.repo import Repo

from hive.errors import HiveError
from hive.git.auth import GitAuth, refusal, scrub, transport
from hive.git.fetching import deepen, fetch_branch, is_shallow
from hive.git.local import link_clone, read_branch
from hive.git.localcopy import lacking, land
from hive.git.safety import check_url
from hive.rules.branches import branch_name

REPO_DIRNAME = "repo.git"
REF_LOCK_WAIT_SECONDS = 5.0  # a ref's lock file is held for the instant of one write
REF_LOCK_STALE_SECONDS = 2.0  # no live writer holds one this long

log = logging.getLogger("hive.git")


class GitError(HiveError):
    """A git operation that cannot go on; the message names the repository and the step."""


@dataclass(frozen=True)
class Checkout:
    """The opened clone and where its worktrees go.

    dulwich promises no thread safety per `Repo` object (its pack cache is a plain dict),
    so every use of `repo` holds `lock`. Work that may run beside other work, such as a
    turn's ending, opens its own `Repo` on the same repository with `own_repo` instead:
    separate objects on one object store are safe on disk, as git does it (a pack is
    renamed into place before its index, and only a pack with an index is read)."""

    repo: Repo
    workdir: Path
    base: str
    base_sha: str
    lock: threading.Lock = field(default_factory=threading.Lock, compare=False, repr=False)
    # the forge's credentials for its git host (HIVE_FORGE=github), for every fetch
    # and push this clone makes
    auth: GitAuth | None = field(default=None, compare=False, repr=False)


@contextmanager
def own_repo(checkout: Checkout) -> Iterator[Repo]:
    """A `Repo` object of the checkout's repository for the caller alone, closed on exit;
    it needs no lock and holds none."""
    repo = Repo(str(checkout.repo.path))
    try:
        yield repo
    finally:
        repo.close()


def branch_ref(issue: int) -> Ref:
    """`refs/heads/queen-<issue>`."""
    if isinstance(issue, bool) or not isinstance(issue, int) or issue < 1:
        raise GitError(f"issue must be a positive integer, got {issue!r}")
    return Ref(f"refs/heads/{branch_name(issue)}".encode())


def open_checkout(
    url: str,
    workdir: Path,
    base: str = "main",
    depth: int = 0,
    *,
    auth: GitAuth | None = None,
) -> Checkout:
    """Open the clone under `workdir`, cloning `url` first when it is absent, and fetch
    `base` from `url` so base is current; `auth` goes with the fetches to the forge's git
    host (`hive.git.auth`). Raises GitError or UnsafeGitError.

    A repository on this machine is cloned by linking its packs (`hive.git.local`);
    anything else is fetched, only the last `depth` commits of base when `depth` is
    above 0 (`HIVE_CLONE_DEPTH`: a shallow clone, enough for a runner)."""
    check_url(url)
    path = Path(workdir) / REPO_DIRNAME
    origin = origin_of(url)
    if path.exists():
        try:
            repo = Repo(str(path))
        except NotGitRepository:
            raise GitError(f"{path} exists and is not a git repository: move it away") from None
        recorded = _recorded_origin(repo)
        if recorded is not None and recorded != origin:
            repo.close()
            raise GitError(
                f"{path} is a clone of {recorded}, not {origin}: use another HIVE_WORKDIR"
            )
    else:
        repo = _new_clone(url, path, origin)
    base_sha = refresh_base(repo, url, base, depth or None, auth=auth)
    return Checkout(repo=repo, workdir=Path(workdir), base=base, base_sha=base_sha, auth=auth)


def _new_clone(url: str, path: Path, origin: str) -> Repo:
    path.parent.mkdir(parents=True, exist_ok=True)
    repo = Repo.init_bare(str(path), mkdir=True)
    config = repo.get_config()
    config.set((b"remote", b"origin"), b"url", origin.encode())
    # the hive writes no multi-pack-index; unless told so, dulwich looks for one on the
    # disk at every object it reads (a stat each: a tenth of a salvage's time)
    config.set((b"core",), b"multiPackIndex", b"false")
    config.write_to_path()
    repo.close()
    source = _local_git_dir(url)
    if source is not None:
        try:
            link_clone(source, path)
        except OSError as err:
            raise GitError(f"cannot link the objects of {origin}: {err}") from err
    return Repo(str(path))


def _local_git_dir(url: str) -> Path | None:
    """The git directory of `url` when it names a repository on this machine."""
    client, local = get_transport_and_path(url)
    if not isinstance(client, LocalGitClient):
        return None
    try:
        with Repo(local) as source:
            return Path(source.commondir())
    except (NotGitRepository, OSError):
        return None


def redact(text: str, url: str) -> str:
    """`text` (an error, say) with `url` as given replaced by its origin, and the
    password it carries, or the user when it carries none (a token may be the user),
    replaced by `***` wherever else it appears."""
    text = text.replace(url, origin_of(url)) if url else text
    try:
        parsed = urlsplit(url)
        secret = parsed.password or parsed.username
    except ValueError:
        return text
    if secret:
        for form in {secret, unquote(secret)}:
            text = text.replace(form, "***")
    return text


def why(err: BaseException, url: str, auth: GitAuth | None) -> str:
    """One line saying why a fetch or push to `url` failed, without the credentials
    `url` carries or the forge's token."""
    return refusal(err, auth, url) or scrub(redact(str(err), url), auth)


def origin_of(url: str) -> str:
    """`url` as recorded in the clone: a local path made absolute, a URL without the
    user and password it may carry (no credential is written to disk)."""
    parsed = urlsplit(url)
    if parsed.scheme == "file":
        return str(Path(parsed.path).resolve())
    if parsed.scheme:
        host = parsed.hostname or ""
        netloc = f"{host}:{parsed.port}" if parsed.port else host
        return urlunsplit((parsed.scheme, netloc, parsed.path, parsed.query, ""))
    return str(Path(url).resolve())


def _recorded_origin(repo: Repo) -> str | None:
    try:
        return repo.get_config().get((b"remote", b"origin"), b"url").decode()
    except KeyError:
        return None


def refresh_base(
    repo: Repo,
    url: str,
    base: str,
    depth: int | None = None,
    *,
    auth: GitAuth | None = None,
) -> str:
    """Fetch branch `base` of `url` into `refs/remotes/origin/<base>`; return its sha,
    with `auth`'s credentials when `url` is the forge's git host.

    `depth` (the first fetch of a clone over the network only) makes the clone shallow:
    that many commits of base's history. Later fetches bring what is new since."""
    check_url(url)
    client, remote_path = transport(url, auth)
    wanted = Ref(f"refs/heads/{base}".encode())
    tracking = Ref(f"refs/remotes/origin/{base}".encode())
    if isinstance(client, LocalGitClient):
        # a repository on this machine: its branch is read, and what its tip needs that
        # this clone lacks is copied (`hive.git.localcopy`): nothing when this clone holds
        # it already (a linked clone, a base that did not move)
        tip = _copy_local(repo, remote_path, wanted)
        if tip is not None:
            set_ref(repo, tracking, tip, synced=False)
            return tip.decode()
        depth = None  # dulwich serving a path records no shallow boundary
    elif tracking in repo.refs:
        depth = None
    try:
        # the sha fetched is the one advertised: a local fetch reads the refs again after
        # copying the objects, and a push landing in between would name a missing commit
        sha = fetch_branch(repo, client, remote_path, wanted, depth=depth).sha
    except Exception as err:  # dulwich raises many kinds; the user needs one line
        where = origin_of(url)
        raise GitError(f"cannot fetch {base} from {where}: {why(err, url, auth)}") from err
    if sha is None:
        raise GitError(f"{origin_of(url)} has no branch {base!r} (HIVE_BASE_REF)")
    set_ref(repo, tracking, sha, synced=False)
    return sha.decode()


def set_ref(repo: Repo, ref: Ref, sha: ObjectID, *, synced: bool = True) -> None:
    """Point `ref` at `sha`. Another writer of the same ref (a thread with a `Repo` of its
    own, as `own_repo` gives) holds `<ref>.lock` for the instant of its write, and dulwich
    refuses at once where git would wait: so wait. A lock older than
    REF_LOCK_STALE_SECONDS was left by a writer that died mid-write (a process killed by
    SIGKILL; a clone belongs to one process at a time): it is removed, with a warning.
    Raises GitError naming the lock file when it stays for REF_LOCK_WAIT_SECONDS.
    A ref that already names `sha` is not written again (dulwich syncs every ref write to
    disk: a Queen's round refreshed an unmoved base at that cost every tick).

    `synced=False` writes the ref without syncing it to disk (the sync costs 12 ms at a
    load of 36), for a ref that is rebuilt after the machine's crash from what is kept
    elsewhere: a remote-tracking ref (fetched again) or a branch imported from its bundle
    in the store. A process killed mid-write leaves the old sha or the new one either
    way: the new file is renamed into place. A branch that holds a bee's work before its
    bundle is stored, and the remote's branch a push moves, stay synced."""
    current = repo.refs.read_ref(ref)
    if current == sha:
        return
    refs = repo.refs
    unsynced = None
    if not synced and isinstance(refs, DiskRefsContainer):
        unsynced = None if (current or b"").startswith(SYMREF) else refs
    deadline = time.monotonic() + REF_LOCK_WAIT_SECONDS
    pause = 0.001
    while True:
        try:
            if unsynced is not None:
                _write_unsynced(unsynced, ref, sha)
            else:
                repo.refs[ref] = sha
            return
        except FileLocked as err:
            lock = Path(os.fsdecode(err.lockfilename))
            if _stale(lock):
                log.warning("removing %s: a writer that died mid-write left it", lock)
                lock.unlink(missing_ok=True)
                continue
            if time.monotonic() >= deadline:
                raise GitError(
                    f"{lock} stayed for {REF_LOCK_WAIT_SECONDS:g} s: another writer holds"
                    " it (remove it when no hive process runs on this clone)"
                ) from err
            if pause == 0.001:
                log.info("%s is being written by another writer: waiting", ref.decode())
            time.sleep(pause)
            pause = min(pause * 2, 0.05)


def _write_unsynced(refs: DiskRefsContainer, ref: Ref, sha: ObjectID) -> None:
    """Write the loose ref under its lock file, as dulwich does, without the sync."""
    path = refs.refpath(ref)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with GitFile(path, "wb", fsync=False) as out:
        out.write(sha + b"\n")


def _stale(lock: Path) -> bool:
    try:
        return time.time() - lock.stat().st_mtime > REF_LOCK_STALE_SECONDS
    except FileNotFoundError:  # its writer finished meanwhile
        return False


def deepen_base(
    repo: Repo, url: str, base: str, wanted: Sequence[str], *, auth: GitAuth | None = None
) -> bool:
    """Whether the clone holds every commit in `wanted` once its history of `base` is
    deepened from `url` as far as needed, for a shallow clone (`HIVE_CLONE_DEPTH`) that
    lacks an older commit of base: the one a branch or an earlier bundle was cut from.
    A clone that is not shallow is not fetched from. Raises GitError."""
    store = repo.object_store
    if all(ObjectID(sha.encode()) in store for sha in wanted):
        return True
    if not is_shallow(repo):
        return False
    check_url(url)
    client, remote_path = transport(url, auth)
    shas = [sha.encode() for sha in wanted]
    try:
        return deepen(repo, client, remote_path, Ref(f"refs/heads/{base}".encode()), shas)
    except Exception as err:  # as in refresh_base
        where = origin_of(url)
        raise GitError(f"cannot deepen {base} from {where}: {why(err, url, auth)}") from err


def _copy_local(repo: Repo, path: str, ref: Ref) -> ObjectID | None:
    """The tip of `ref` in the repository at `path` once `repo` holds it with all it
    reaches, copied by `hive.git.localcopy`; None when it cannot be copied that way (no
    such branch or repository, a shallow source, a long way behind): the caller fetches."""
    try:
        with Repo(path) as source:
            sha = read_branch(Path(source.commondir()), ref)
            tip = ObjectID(sha) if sha is not None else source.refs[ref]
            store = repo.object_store
            if tip in store:
                return tip
            objects = lacking(source.object_store.get_raw, store.__contains__, tip)
    except (KeyError, NotGitRepository, OSError):
        return None
    if objects is None:
        return None
    land(store, objects)
    return tip


def resolve(repo: Repo, name: str) -> str:
    """The commit sha `name` names: a sha, `refs/...`, a remote-tracking `origin/<base>`
    or a local branch, tried in that order. Raises GitError."""
    raw = name.encode()
    candidates = [
        raw,
        b"refs/remotes/origin/" + raw,
        b"refs/heads/" + raw,
        b"refs/" + raw,
    ]
    if len(raw) == 40:
        try:
            obj = repo.object_store[ObjectID(raw)]
        except (KeyError, ValueError):
            obj = None
        if isinstance(obj, Commit):
            return name
    for ref in candidates:
        if ref.startswith(b"refs/") and Ref(ref) in repo.refs:
            return repo.refs[Ref(ref)].decode()
    raise GitError(f"{repo.path} has no commit named {name!r}")
