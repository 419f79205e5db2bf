"""The boundary holds on the agent's own commits: a branch that carries a path the rule
refuses is cut back to one commit on base with only its changes inside the boundary,
judged by the git binary (log, diff, fsck of what the bundle carries)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from dulwich.objects import Blob, Commit, ObjectID, Tree
from dulwich.repo import Repo

from hive.git import cutback
from hive.git.bundles import bundle
from hive.git.cutback import cut_back
from hive.git.repo import refresh_base
from hive.git.worktrees import Cut, cut_worktree

from .conftest import Git, head_of, write

BOUNDARY = ["src/app.py", "src/new.py"]


@pytest.fixture
def cut(clone: Repo, tmp_path: Path) -> Cut:
    return cut_worktree(clone, 21, "main", tmp_path / "work")


def commit_all(git: Git, tree: Path, message: str) -> None:
    git("add", "-A", cwd=tree)
    git("commit", "-qm", message, cwd=tree)


def carried(git: Git, tree: Path, upstream: Path) -> list[str]:
    base = head_of(git, upstream, "main")
    return git("diff", "--name-status", f"{base}..queen-21", cwd=tree).splitlines()


def fetched_and_checked(clone: Repo, git: Git, tmp_path: Path, upstream: Path) -> str:
    """The branch's bundle fetched into a copy of upstream, checked by `git fsck
    --strict`; what it carries (`git log --stat` of base..the fetched head)."""
    out = bundle(clone, 21, "main", 10**9)
    assert out is not None
    path = tmp_path / "queen-21.bundle"
    path.write_bytes(out.data)
    mirror = tmp_path / "mirror"
    git("clone", "-q", "--bare", str(upstream), str(mirror), cwd=tmp_path)
    git("fetch", "-q", str(path), "refs/heads/queen-21:refs/heads/got", cwd=mirror)
    git("fsck", "--strict", cwd=mirror)
    return git("log", "--format=%s", "--name-only", "main..got", cwd=mirror)


def test_an_agent_commit_outside_the_boundary_is_cut_back_to_it(
    clone: Repo, cut: Cut, git: Git, tmp_path: Path, upstream: Path
) -> None:
    write(cut.path, {"src/app.py": "print('in')\n", "README.md": "rewritten\n", "new.txt": "x"})
    os.symlink("/etc/passwd", cut.path / "src" / "new.py")
    os.chmod(cut.path / "docs" / "guide.md", 0o755)  # a mode change outside
    commit_all(git, cut.path, "agent: everything")

    result = cut_back(clone, 21, "main", BOUNDARY)

    assert result.sha == head_of(git, cut.path, "refs/heads/queen-21")
    assert result.refused == (
        ("README.md", "is outside the boundary"),
        ("docs/guide.md", "is outside the boundary"),
        ("new.txt", "is outside the boundary"),
        ("src/new.py", "is a symlink that leads out of the repository"),
    )
    assert carried(git, cut.path, upstream) == ["M\tsrc/app.py"]
    base = head_of(git, upstream, "main")
    log = git("log", "--format=%P %s", f"{base}..queen-21", cwd=cut.path).splitlines()
    assert log == [f"{base} cut back to the boundary: queen-21 carried what it may not"]
    message = git("log", "-1", "--format=%B", "queen-21", cwd=cut.path)
    assert "README.md is outside the boundary" in message and "- agent: everything" in message
    shown = fetched_and_checked(clone, git, tmp_path, upstream)
    assert shown.split() == ["cut", "back", "to", "the", "boundary:", "queen-21", "carried",
                             "what", "it", "may", "not", "src/app.py"]  # fmt: skip


def test_a_branch_inside_the_boundary_is_left_as_the_agent_committed_it(
    clone: Repo, cut: Cut, git: Git
) -> None:
    write(cut.path, {"src/app.py": "print('in')\n", "src/new.py": "new\n"})
    os.symlink("app.py", cut.path / "src" / "link.py")  # a link inside, in a boundary dir
    commit_all(git, cut.path, "agent: inside")
    head = head_of(git, cut.path, "HEAD")

    assert cut_back(clone, 21, "main", ["src"]).sha is None
    assert head_of(git, cut.path, "refs/heads/queen-21") == head


def test_an_untouched_branch_is_not_judged(
    clone: Repo, cut: Cut, monkeypatch: pytest.MonkeyPatch
) -> None:
    def judged(*args: object) -> None:
        raise AssertionError("a branch at its base was judged")

    monkeypatch.setattr(cutback, "_judge_range", judged)
    assert cut_back(clone, 21, "main", ["src"]) == cutback.CutBack(None)


def test_an_outside_change_reverted_in_a_later_commit_is_still_cut(
    clone: Repo, cut: Cut, git: Git, tmp_path: Path, upstream: Path
) -> None:
    write(cut.path, {"README.md": "rewritten\n", "src/app.py": "print('in')\n"})
    commit_all(git, cut.path, "agent: readme and app")
    write(cut.path, {"README.md": "hello\n"})
    commit_all(git, cut.path, "agent: readme back")

    result = cut_back(clone, 21, "main", BOUNDARY)

    assert (result.refused, result.squashed) == ((("README.md", "is outside the boundary"),), 2)
    assert "README.md" not in fetched_and_checked(clone, git, tmp_path, upstream)


def _commit_tree(clone: Repo, cut: Cut, entries: list[tuple[bytes, int, bytes]]) -> str:
    """A commit on the branch whose `src` holds `entries` as written (no sorting): what
    an agent could make with `git hash-object --literally` and `git update-ref`."""
    store = clone.object_store
    base = store[ObjectID(cut.head_sha.encode())]
    assert isinstance(base, Commit)
    root = store[base.tree]
    assert isinstance(root, Tree)
    raw = b"".join(
        b"%o %s\0" % (mode, name) + bytes.fromhex(sha.decode()) for name, mode, sha in entries
    )
    src = Tree.from_raw_string(Tree.type_num, raw)
    store.add_object(src)
    root.add(b"src", 0o040000, src.id)
    store.add_object(root)
    commit = Commit()
    commit.tree, commit.parents = root.id, [base.id]
    commit.author = commit.committer = b"agent <a@example.com>"
    commit.author_time = commit.commit_time = 0
    commit.author_timezone = commit.commit_timezone = 0
    commit.message = b"agent: crafted\n"
    store.add_object(commit)
    clone.refs[b"refs/heads/queen-21"] = commit.id
    return commit.id.decode()


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        (b"..", "holds the name '..'"),
        (b".git", "points into .git"),
        (b".GIT", "points into .git"),
        (b".", "holds the name '.'"),
        (b"a\\b", "holds a name with a slash"),
    ],
)
def test_a_dotdot_or_dotgit_entry_an_agent_commits_is_cut_back(
    clone: Repo, cut: Cut, git: Git, tmp_path: Path, upstream: Path, name: bytes, reason: str
) -> None:
    blob = Blob.from_string(b"[core]\n\tfsmonitor = touch /tmp/pwned\n")
    clone.object_store.add_object(blob)
    app = Blob.from_string(b"print('in')\n")
    clone.object_store.add_object(app)
    entries = sorted([(name, 0o100644, blob.id), (b"app.py", 0o100644, app.id)])
    _commit_tree(clone, cut, entries)

    result = cut_back(clone, 21, "main", ["src"])

    assert result.refused == ((f"src/{name.decode()}", reason),)
    assert carried(git, cut.path, upstream) == ["M\tsrc/app.py", "D\tsrc/util.py"]
    shown = fetched_and_checked(clone, git, tmp_path, upstream).splitlines()
    assert f"src/{name.decode()}" not in shown and "src/app.py" in shown


def test_a_tree_naming_a_path_twice_or_out_of_order_is_cut_back(
    clone: Repo, cut: Cut, git: Git, tmp_path: Path, upstream: Path
) -> None:
    one = Blob.from_string(b"one\n")
    two = Blob.from_string(b"two\n")
    clone.object_store.add_object(one)
    clone.object_store.add_object(two)
    _commit_tree(clone, cut, [(b"b.py", 0o100644, one.id), (b"a.py", 0o100644, two.id),
                              (b"a.py", 0o100644, one.id)])  # fmt: skip

    result = cut_back(clone, 21, "main", ["src"])

    assert result.refused == (
        ("src", "is a tree whose names are out of git's order"),
        ("src", "is named twice in its tree"),
    )
    fetched_and_checked(clone, git, tmp_path, upstream)


def test_a_symlink_chained_through_another_link_out_is_cut_back(
    clone: Repo, cut: Cut, git: Git
) -> None:
    os.symlink("..", cut.path / "src" / "up")  # the repository's root: inside
    # read as text, src/up/../etc is src/etc; followed, `up` is the root and `..` above it
    os.symlink("up/../etc", cut.path / "src" / "new.py")
    commit_all(git, cut.path, "agent: links")

    result = cut_back(clone, 21, "main", ["src"])

    assert result.refused == (("src/new.py", "is a symlink that leads out of the repository"),)


def test_a_branch_of_too_many_commits_is_cut_back_without_judging_each(
    clone: Repo, cut: Cut, git: Git, upstream: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cutback, "JUDGE_MAX_COMMITS", 2)
    for n in range(3):
        write(cut.path, {"src/app.py": f"print({n})\n"})
        commit_all(git, cut.path, f"agent: {n}")

    result = cut_back(clone, 21, "main", ["src"])

    assert (result.refused, result.squashed) == ((), 3)
    assert "over 2 commits to judge" in git("log", "-1", "--format=%B", "queen-21", cwd=cut.path)
    assert carried(git, cut.path, upstream) == ["M\tsrc/app.py"]


def test_a_branch_continued_from_an_older_base_is_judged_by_its_own_commits(
    clone: Repo, cut: Cut, git: Git, upstream: Path
) -> None:
    write(cut.path, {"src/app.py": "print('in')\n"})
    commit_all(git, cut.path, "agent: inside")
    head = head_of(git, cut.path, "HEAD")
    write(upstream, {"README.md": "base moved on\n"})  # outside the boundary, upstream
    git("commit", "-qam", "fourth", cwd=upstream)
    newer = refresh_base(clone, str(upstream), "main")

    assert cutback.refused_paths(clone, newer, head, BOUNDARY) == ()
    assert cut_back(clone, 21, newer, BOUNDARY).sha is None
    assert head_of(git, cut.path, "refs/heads/queen-21") == head


def test_a_cut_of_a_branch_from_an_older_base_keeps_the_newer_bases_changes(
    clone: Repo, cut: Cut, git: Git, upstream: Path
) -> None:
    write(cut.path, {"src/app.py": "print('in')\n", "README.md": "mine\n"})
    commit_all(git, cut.path, "agent: app and readme")
    write(upstream, {"src/util.py": "x = 'base moved on'\n"})  # inside the boundary
    git("commit", "-qam", "fourth", cwd=upstream)
    newer = refresh_base(clone, str(upstream), "main")

    result = cut_back(clone, 21, newer, ["src"])

    assert result.refused == (("README.md", "is outside the boundary"),)
    assert git("diff", "--name-status", f"{newer}..queen-21", cwd=cut.path).splitlines() == [
        "M\tsrc/app.py"
    ]
    assert git("show", "queen-21:src/util.py", cwd=cut.path) == "x = 'base moved on'\n"


def test_a_cut_never_undoes_a_change_the_newer_base_made_to_a_file_the_branch_changed(
    clone: Repo, cut: Cut, git: Git, upstream: Path
) -> None:
    """`hive chaos --loop` (seed 15 under load): a person rewrote a line of a hostile
    issue's file while its branch, forked from an older base, appended to it; the cut put
    the branch's whole file on the newer base, the merge took it as the only change, and
    main lost the person's line without a conflict."""
    write(cut.path, {"src/app.py": "print(1)\nprint('the bee')\n", "README.md": "mine\n"})
    commit_all(git, cut.path, "agent: app and readme")
    fork = head_of(git, upstream, "main")
    write(upstream, {"src/app.py": "print('a person')\n"})  # the same file, upstream
    git("commit", "-qam", "a person's edit", cwd=upstream)
    newer = refresh_base(clone, str(upstream), "main")

    result = cut_back(clone, 21, newer, ["src"])

    assert result.refused == (("README.md", "is outside the boundary"),)
    assert git("rev-parse", "queen-21^", cwd=cut.path).strip() == fork  # on the fork
    assert git("show", "queen-21:src/app.py", cwd=cut.path) == "print(1)\nprint('the bee')\n"
    assert git("show", "queen-21:README.md", cwd=cut.path) != "mine\n"
    # the merge with base meets both changes: a conflict, not the person's line lost
    done = git("merge-tree", "--write-tree", newer, "queen-21", cwd=cut.path, check=False)
    assert "CONFLICT (content): Merge conflict in src/app.py" in done
