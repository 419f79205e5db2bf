"""The boundary on the agent's own commits (issue 25): before a branch is bundled, every
commit of `base..queen-<issue>` is judged path by path by `hive.rules.carried` (the
rule the salvage follows for what a turn left uncommitted), so a commit the agent made
itself (`git commit -am`) carries nothing the salvage would have refused.

When any commit changes a path the rule refuses, the branch is cut back: it becomes one
commit on base whose tree is base's with only the branch's allowed changes (since it
forked from base's history), and the refused paths are named. When base changed one of
those files too since the fork, the commit goes on the fork instead (the fork's tree
with the allowed changes), so the merge with base meets both changes and says so rather
than base's being undone. Nothing refused is then
in the bundle, so it never reaches the review, the checks, the merge or the push. A
branch of more than JUDGE_MAX_COMMITS commits beyond base is cut back without judging
each. Only changed subtrees are read.
"""

from __future__ import annotations

import stat
from collections.abc import Sequence
from dataclasses import dataclass

from dulwich.graph import find_merge_base
from dulwich.objects import Commit, ObjectID, ShaFile
from dulwich.refs import Ref
from dulwich.repo import Repo

from hive.git.commits import hive_commit
from hive.git.repo import GitError, branch_ref, resolve
from hive.git.salvage import HIVE_IDENTITY, apply_updates
from hive.git.status import LINK_MODE, Entry, flatten, tree_entries
from hive.git.storing import store_objects
from hive.rules.branches import branch_name
from hive.rules.carried import NAMED_MAX, change_fault, name_fault, refused_sentence

JUDGE_MAX_COMMITS = 500
_DUPLICATE = "is named twice in its tree"
_UNSORTED = "is a tree whose names are out of git's order"


@dataclass(frozen=True)
class Changed:
    """One path a commit changed: its entry before and after (None: absent), and the
    fault of a name along it (None: its names are plain)."""

    path: str
    old: Entry | None
    new: Entry | None
    name_fault: str | None = None


@dataclass(frozen=True)
class CutBack:
    """`sha`: the branch's new head when it was cut back (None: nothing refused, the
    branch is as the agent left it); `refused`: (path, reason) of each refused path;
    `squashed`: how many commits the cut replaced."""

    sha: str | None
    refused: tuple[tuple[str, str], ...] = ()
    squashed: int = 0

    def sentence(self, branch: str) -> str:
        """What the transcript says of a cut (empty when nothing was cut)."""
        if self.sha is None:
            return ""
        what = refused_sentence(self.refused) or f"over {JUDGE_MAX_COMMITS} commits to judge"
        return (
            f"cut back to the boundary: {branch}'s commits carried what it may not "
            f"({what}); the branch is now one commit on base, {self.sha[:12]}, with only "
            f"the changes inside the boundary (it replaced {self.squashed})"
        )


def cut_back(
    repo: Repo,
    issue: int,
    base: str,
    boundary: Sequence[str],
    *,
    identity: str = HIVE_IDENTITY,
    now: float | None = None,
) -> CutBack:
    """Judge `base..queen-<issue>` and cut the branch back when anything is refused (see
    the module). Raises GitError for a missing branch or base, or a branch moved during
    the cut; KeyError or ValueError for an object missing or unreadable."""
    ref = branch_ref(issue)
    if ref not in repo.refs:
        raise GitError(f"{repo.path} has no branch {branch_name(issue)}")
    head = repo.refs[ref]
    base_sha = ObjectID(resolve(repo, base).encode())
    if head == base_sha:
        return CutBack(None)
    allowed = tuple(boundary)
    refused, commits = _judge_range(repo, base_sha, head, allowed)
    if not refused and len(commits) <= JUDGE_MAX_COMMITS:
        return CutBack(None)
    base_tree = _tree_of(repo, base_sha)
    # the branch's own changes: from where it forked (an older base, for a branch an
    # earlier attempt began), so base's later changes are kept, not undone
    forks = find_merge_base(repo, [base_sha, head])
    fork_tree = _tree_of(repo, forks[0]) if forks else base_tree
    final = _changes(repo, fork_tree, _tree_of(repo, head))
    links = _links(repo, _tree_of(repo, head)) if _has_link(final) else {}
    updates: dict[str, Entry | None] = {}
    for change in final:
        if _fault(repo, change, allowed, links) is None:
            updates[change.path] = change.new
    # a file base changed since the fork and the branch changed too: the branch's
    # version on base would undo base's change (a person's edit, another issue's) without
    # a word. Then the cut goes on the fork, so the merge with base sees both and says so
    parent, onto = base_sha, base_tree
    if forks and forks[0] != base_sha:
        moved = {c.path for c in _changes(repo, fork_tree, base_tree)}
        if moved.intersection(updates):
            parent, onto = forks[0], fork_tree
    new: list[ShaFile] = []
    tree = apply_updates(repo, onto, updates, new)
    commit = _commit(parent, tree.id, issue, refused, commits, identity, now)
    new.append(commit)
    store_objects(repo.object_store, new)
    if not repo.refs.set_if_equals(Ref(ref), ObjectID(head), commit.id):
        raise GitError(
            f"{branch_name(issue)} moved during its cut back; {commit.id.decode()} is unused"
        )
    return CutBack(commit.id.decode(), tuple(sorted(refused)), len(commits))


def refused_paths(
    repo: Repo, base_sha: str, head_sha: str, boundary: Sequence[str]
) -> tuple[tuple[str, str], ...]:
    """(path, reason) of each path a commit of `base_sha..head_sha` (up to
    JUDGE_MAX_COMMITS of them) changes that the boundary refuses, sorted: what a reviewer
    checks before it writes the head's tree out. Each commit is judged against its own
    parents, never the range against base: a branch continued from an older base would
    show base's own later changes as its. Raises KeyError or ValueError for an object
    missing or unreadable."""
    base, head = ObjectID(base_sha.encode()), ObjectID(head_sha.encode())
    refused, _commits = _judge_range(repo, base, head, tuple(boundary))
    return tuple(sorted(refused))


def _judge_range(
    repo: Repo, base: ObjectID, head: ObjectID, allowed: tuple[str, ...]
) -> tuple[set[tuple[str, str]], list[Commit]]:
    """The refused (path, reason) of each commit of `base..head` against each of its
    parents, up to JUDGE_MAX_COMMITS commits; and the commits (one more than that at
    most: more than JUDGE_MAX_COMMITS means some went unjudged)."""
    walker = repo.get_walker(include=[head], exclude=[base], max_entries=JUDGE_MAX_COMMITS + 1)
    commits = [entry.commit for entry in walker]
    refused: set[tuple[str, str]] = set()
    for commit in commits[:JUDGE_MAX_COMMITS]:
        parents: list[bytes | None] = [_tree_of(repo, p) for p in commit.parents]
        for parent_tree in parents or [None]:
            refused |= _judge(repo, parent_tree, commit.tree, allowed)
    return refused, commits


def _tree_of(repo: Repo, sha: bytes) -> bytes:
    commit = repo.object_store[ObjectID(sha)]
    if not isinstance(commit, Commit):
        raise GitError(f"{sha.decode()} is not a commit")
    tree: bytes = commit.tree
    return tree


def _judge(
    repo: Repo, old: bytes | None, new: bytes, allowed: tuple[str, ...]
) -> set[tuple[str, str]]:
    changed = _changes(repo, old, new)
    links = _links(repo, new) if _has_link(changed) else {}
    refused = set()
    for change in changed:
        fault = _fault(repo, change, allowed, links)
        if fault is not None:
            refused.add((change.path, fault))
    return refused


def _fault(
    repo: Repo, change: Changed, allowed: tuple[str, ...], links: dict[str, str]
) -> str | None:
    if change.name_fault is not None:
        return change.name_fault
    mode = change.new[0] if change.new is not None else None
    target = None
    if change.new is not None and change.new[0] == LINK_MODE:
        target = links.get(change.path)
    return change_fault(change.path, mode, allowed, target, links)


def _has_link(changed: list[Changed]) -> bool:
    return any(c.new is not None and c.new[0] == LINK_MODE for c in changed)


def _links(repo: Repo, tree: bytes) -> dict[str, str]:
    """Every symlink of `tree` with its target."""
    store = repo.object_store
    return {
        path: store.get_raw(ObjectID(sha))[1].decode("utf-8", "surrogateescape")
        for path, (mode, sha) in flatten(repo, tree).items()
        if mode == LINK_MODE
    }


def _changes(repo: Repo, old: bytes | None, new: bytes | None) -> list[Changed]:
    """Every path that differs from tree `old` to tree `new`, descending only into
    subtrees that changed; a name that is not plain is one change, not descended."""
    out: list[Changed] = []
    todo: list[tuple[str, bytes | None, bytes | None]] = [("", old, new)]
    while todo:
        prefix, before_id, after_id = todo.pop()
        if before_id == after_id:
            continue
        before = _entries(repo, before_id, prefix, None)
        after = _entries(repo, after_id, prefix, out)
        for name in sorted(before.keys() | after.keys()):
            was, now = before.get(name), after.get(name)
            if was == now:
                continue
            text = name.decode("utf-8", "surrogateescape")
            path = prefix + text
            fault = name_fault(text) if now is not None else None
            if fault is not None:
                out.append(Changed(path, was, now, fault))
                continue
            was_dir = was is not None and stat.S_ISDIR(was[0])
            now_dir = now is not None and stat.S_ISDIR(now[0])
            if was_dir or now_dir:
                todo.append(
                    (
                        path + "/",
                        was[1] if was and was_dir else None,
                        now[1] if now and now_dir else None,
                    )
                )
            if (was is not None and not was_dir) or (now is not None and not now_dir):
                out.append(Changed(path, None if was_dir else was, None if now_dir else now))
    return sorted(out, key=lambda change: change.path)


def _entries(
    repo: Repo, tree: bytes | None, prefix: str, faults: list[Changed] | None
) -> dict[bytes, Entry]:
    """The entries of `tree` by name; with `faults` given, a tree that names an entry
    twice or out of git's order is noted there."""
    if tree is None:
        return {}
    listed = list(tree_entries(repo.object_store, tree))
    entries = {name: (mode, sha) for name, mode, sha in listed}
    if faults is not None:
        where = prefix.rstrip("/") or "/"
        if len(entries) != len(listed):
            faults.append(Changed(where, None, None, _DUPLICATE))
        keys = [name + b"/" if stat.S_ISDIR(mode) else name for name, mode, _sha in listed]
        if keys != sorted(keys):
            faults.append(Changed(where, None, None, _UNSORTED))
    return entries


def _commit(
    base: bytes,
    tree: bytes,
    issue: int,
    refused: set[tuple[str, str]],
    commits: list[Commit],
    identity: str,
    now: float | None,
) -> Commit:
    why = refused_sentence(refused) or f"over {JUDGE_MAX_COMMITS} commits to judge"
    subjects = [
        "- " + c.message.split(b"\n", 1)[0].decode("utf-8", "replace")[:200]
        for c in reversed(commits[:NAMED_MAX])
    ]
    message = (
        f"cut back to the boundary: {branch_name(issue)} carried what it may not\n\n{why}\n\n"
        "Its commits, of which only the changes inside the boundary are kept here:\n"
        + "\n".join(subjects)
        + "\n"
    )
    return hive_commit(tree, base, identity, message, now)
