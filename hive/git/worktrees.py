"""Worktrees `queen-<issue>`: cut, reuse, list, remove, prune.

Written to the layout the git binary reads (`<common>/worktrees/<id>/{gitdir,commondir,
HEAD,index}` and a `.git` file in the worktree), so `git worktree list` agrees. The
checkout writes each file once and the index once, with no attribute or filter lookups:
the hive checks out exactly the bytes of the commit.

A runner's worktree is parked when its turn is over (`park_worktree`: renamed under
`<workdir>/.spare/`, its registration gone), not deleted, and the next cut in the same
process takes it: it is brought to the new commit by the change between the two trees and
verified against what the cut wrote, as a kept tree is (`hive.git.kept`: what the bee
changed or left, `.git` included, is removed or written again), instead of every file
created again. Spares an earlier process left are removed at the first cut or park.
"""

from __future__ import annotations

import os
import shutil
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from dulwich.objects import Commit, ObjectID
from dulwich.refs import Ref
from dulwich.repo import Repo

from hive.git.checkout import Made, write_tree
from hive.git.index import IndexFile
from hive.git.kept import KeptTree
from hive.git.repo import GitError, branch_ref, resolve
from hive.git.scratch import remove_scratch_tree
from hive.git.status import changes
from hive.rules.branches import BRANCH_PREFIX, branch_name

WORKTREES_DIRNAME = "worktrees"
SPARE_DIRNAME = ".spare"
SPARES_MAX = 8  # parked worktrees a workdir keeps, at most; one more is deleted

_LOCK = threading.Lock()
_CUT: dict[Path, KeptTree] = {}  # worktrees this process cut, by path
_PARKED: dict[Path, list[KeptTree]] = {}  # parked worktrees, by workdir


@dataclass(frozen=True)
class Cut:
    """A worktree ready for a bee. `continued`: the branch existed and was kept.
    `reused`: the directory was left over from an earlier turn; `leftover` counts the
    uncommitted files it held (kept, never cleaned)."""

    path: Path
    branch: str
    head_sha: str
    continued: bool
    reused: bool
    leftover: int


@dataclass(frozen=True)
class WorktreeInfo:
    """One linked worktree, for a reaper: `age_seconds` since it was cut, `size_bytes` on
    disk (files and symlinks, not followed), `issue` when it is a `queen-<issue>` branch."""

    path: Path
    branch: str | None
    issue: int | None
    head_sha: str | None
    age_seconds: float
    size_bytes: int
    prunable: bool


def worktree_path(workdir: Path, issue: int) -> Path:
    return Path(workdir) / branch_name(issue)


def _admin_dir(repo: Repo, name: str) -> Path:
    return Path(repo.commondir()) / WORKTREES_DIRNAME / name


def _registered_path(admin: Path) -> Path | None:
    try:
        gitdir = (admin / "gitdir").read_text().strip()
    except OSError:
        return None
    return Path(gitdir).parent


def cut_worktree(repo: Repo, issue: int, base: str, workdir: Path) -> Cut:
    """The worktree of branch `queen-<issue>` at `<workdir>/queen-<issue>`.

    Continues the branch when it exists, else branches from `base`. A worktree left at
    that path is reused as it is, with its uncommitted files counted. Raises GitError
    when the path holds something that is not that worktree."""
    ref = branch_ref(issue)
    name = branch_name(issue)
    path = worktree_path(workdir, issue).absolute()
    admin = _admin_dir(repo, name)
    registered = _registered_path(admin)
    if path.exists():
        if registered is None or registered.resolve() != path.resolve():
            raise GitError(f"{path} exists and is not the worktree of {name}: move it away")
        head = (admin / "HEAD").read_text().strip()
        if head != f"ref: {ref.decode()}":
            raise GitError(f"worktree {path} is on {head!r}, not {name}")
        tree_repo = Repo(str(path))
        try:
            leftover = len(changes(tree_repo, path))
        finally:
            tree_repo.close()
        return Cut(path, name, repo.refs[ref].decode(), True, True, leftover)
    if admin.exists():
        if registered is not None and registered.exists():
            raise GitError(f"{name} is checked out at {registered}, not {path}: remove that first")
        shutil.rmtree(admin)  # its directory is gone: the registration is stale
    continued = ref in repo.refs
    if not continued:
        repo.refs[ref] = ObjectID(resolve(repo, base).encode())
    head_sha = repo.refs[ref]
    spare = _take_spare(Path(workdir).absolute())
    try:
        if spare is None:
            _register(repo, admin, path, ref)
            kept = KeptTree(path, flatten=False)
            kept.adopt(*_checkout(repo, path, admin / "index", head_sha))
        else:
            kept = _bring_spare(repo, spare, path, head_sha)
            _register(repo, admin, path, ref, made=True)
            _index_of(kept, admin / "index").write()
    except BaseException:
        if spare is not None:
            shutil.rmtree(spare.path, ignore_errors=True)  # where the rename left it
        shutil.rmtree(path, ignore_errors=True)
        shutil.rmtree(admin, ignore_errors=True)
        raise
    with _LOCK:
        _CUT[path] = kept
    return Cut(path, name, head_sha.decode(), continued, False, 0)


def park_worktree(repo: Repo, path: Path) -> None:
    """Take the worktree at `path` and its registration away, as `remove_worktree` does,
    keeping its directory as a spare for this process's next cut when this process cut
    it (else, or past SPARES_MAX spares, it is deleted)."""
    path = Path(path).absolute()
    with _LOCK:
        kept = _CUT.pop(path, None)
    admin = _find_admin(repo, path)
    workdir = path.parent
    spares = _spares(workdir)
    if kept is None or admin is None or (admin / "locked").exists() or len(spares) >= SPARES_MAX:
        remove_worktree(repo, path)
        return
    spare = workdir / SPARE_DIRNAME / uuid.uuid4().hex
    spare.parent.mkdir(exist_ok=True)
    os.rename(path, spare)
    shutil.rmtree(admin)
    kept.moved(spare)
    with _LOCK:
        spares.append(kept)


def _spares(workdir: Path) -> list[KeptTree]:
    """This process's spares of `workdir`; at the first look, an earlier process's are
    removed (what they hold is not known here)."""
    with _LOCK:
        known = _PARKED.get(workdir)
        if known is not None:
            return known
        _PARKED[workdir] = known = []
    remove_scratch_tree(workdir / SPARE_DIRNAME)
    return known


def _take_spare(workdir: Path) -> KeptTree | None:
    spares = _spares(workdir)
    with _LOCK:
        return spares.pop() if spares else None


def _bring_spare(repo: Repo, spare: KeptTree, path: Path, commit_sha: bytes) -> KeptTree:
    """The spare moved to `path` and brought to the commit (its `.git` file, the bee's
    like anything else it left, removed)."""
    os.rename(spare.path, path)
    spare.moved(path)
    spare.bring(repo, commit_sha.decode())
    return spare


def _index_of(kept: KeptTree, index_file: Path) -> IndexFile:
    index = IndexFile(index_file)
    for path, held in kept.held.items():
        assert held.st is not None
        index.set(os.fsencode(path), held.st, held.entry[1], held.entry[0])
    return index


def _register(repo: Repo, admin: Path, path: Path, ref: Ref, *, made: bool = False) -> None:
    if not made:
        path.mkdir(parents=True)
    admin.mkdir(parents=True)
    (admin / "gitdir").write_text(f"{path / '.git'}\n")
    (admin / "commondir").write_text("../..\n")
    (admin / "HEAD").write_text(f"ref: {ref.decode()}\n")
    (path / ".git").write_text(f"gitdir: {admin}\n")


def _checkout(
    repo: Repo, root: Path, index_file: Path, commit_sha: bytes
) -> tuple[bytes, list[Made]]:
    """Write every file of the commit under `root` (empty) and the matching index; the
    commit's tree and what was written."""
    commit = repo.object_store[ObjectID(commit_sha)]
    assert isinstance(commit, Commit)
    index = IndexFile(index_file)
    made = write_tree(repo.object_store, commit.tree, root, index)
    index.write()
    return commit.tree, made


def remove_worktree(repo: Repo, path: Path) -> None:
    """Delete the worktree at `path` with everything in it, and its registration. A path
    that is already gone is fine (the registration still goes). Only the repository's
    paths are read from `repo`, so it needs no lock on it."""
    path = Path(path).absolute()
    with _LOCK:
        _CUT.pop(path, None)
    admin = _find_admin(repo, path)
    if admin is None:
        if path.exists():
            raise GitError(f"{path} is not a worktree of {repo.path}")
        return
    if (admin / "locked").exists():
        raise GitError(f"worktree {path} is locked: {(admin / 'locked').read_text().strip()}")
    shutil.rmtree(path, ignore_errors=True)
    shutil.rmtree(admin)


def prune_worktrees(repo: Repo) -> list[str]:
    """Forget registrations whose directory is gone; return their names."""
    pruned = []
    for admin in _admins(repo):
        target = _registered_path(admin)
        if (target is None or not target.exists()) and not (admin / "locked").exists():
            shutil.rmtree(admin)
            pruned.append(admin.name)
    return sorted(pruned)


def list_worktrees(repo: Repo, now: float | None = None) -> list[WorktreeInfo]:
    """Every linked worktree, sorted by path, with its age and size."""
    now = time.time() if now is None else now
    found = []
    refs = repo.refs.as_dict(Ref(b"refs/heads"))
    for admin in _admins(repo):
        path = _registered_path(admin) or admin
        head = (admin / "HEAD").read_text().strip() if (admin / "HEAD").exists() else ""
        branch = head[len("ref: refs/heads/") :] if head.startswith("ref: refs/heads/") else None
        issue = None
        if branch and branch.startswith(BRANCH_PREFIX) and branch[len(BRANCH_PREFIX) :].isdigit():
            issue = int(branch[6:])
        head_sha = None
        if branch is not None:
            sha = refs.get(Ref(branch.encode()))
            head_sha = sha.decode() if sha else None
        elif head:
            head_sha = head
        found.append(
            WorktreeInfo(
                path=path,
                branch=branch,
                issue=issue,
                head_sha=head_sha,
                age_seconds=max(0.0, now - _cut_time(admin)),
                size_bytes=_size(path) if path.exists() else 0,
                prunable=not path.exists(),
            )
        )
    return sorted(found, key=lambda info: str(info.path))


def _cut_time(admin: Path) -> float:
    # `gitdir` is written once, at the cut; the directory's own mtime moves with the index
    try:
        return (admin / "gitdir").stat().st_mtime
    except OSError:
        return admin.stat().st_mtime


def _admins(repo: Repo) -> list[Path]:
    top = Path(repo.commondir()) / WORKTREES_DIRNAME
    if not top.is_dir():
        return []
    return [entry for entry in top.iterdir() if entry.is_dir()]


def _find_admin(repo: Repo, path: Path) -> Path | None:
    # a cut names its registration after its directory: one read, not one per worktree
    # (retention removes hundreds in a pass); any other is found by the walk
    named = _admin_dir(repo, path.name)
    target = _registered_path(named)
    if target is not None and target.absolute() == path:
        return named
    for admin in _admins(repo):
        target = _registered_path(admin)
        if target is not None and target.absolute() == path:
            return admin
    return None


def _size(root: Path) -> int:
    total = 0
    todo = [str(root)]
    while todo:
        with os.scandir(todo.pop()) as it:
            for item in it:
                if item.is_dir(follow_symlinks=False):
                    todo.append(item.path)
                else:
                    total += item.stat(follow_symlinks=False).st_size
    return total
