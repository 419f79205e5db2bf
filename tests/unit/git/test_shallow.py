"""A shallow clone (`HIVE_CLONE_DEPTH`) over git:// holds only the last commits of base,
and a runner's whole round trip works on it: cut, salvage, bundle, a continued branch on
another shallow runner, and the Queen's import. The server is `git daemon` (one per
connection, as inetd runs it), the other side a real runner meets; the git binary also
judges (fsck, log, bundle verify, fetch)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from dulwich.refs import Ref

from hive.actors.bee.start import _continue_from_bundle
from hive.bench.gitdaemon import GitDaemon
from hive.git.bundles import bundle
from hive.git.importing import UnknownPrerequisite, import_bundle
from hive.git.repo import deepen_base, open_checkout, refresh_base
from hive.git.salvage import salvage
from hive.git.worktrees import cut_worktree

from .conftest import GIT, Git, git_env, head_of, write


@pytest.fixture
def served(tmp_path: Path, upstream: Path) -> Iterator[str]:
    """`upstream` served over git:// by the git binary on a free local port."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    with GitDaemon(upstream.parent, GIT, git_env(home)) as daemon:
        yield daemon.url(upstream.name)


def commits(git: Git, repo: Path, rev: str) -> list[str]:
    return git("log", "--format=%s", rev, cwd=repo).split("\n")[:-1]


def test_a_shallow_clone_holds_depth_commits_and_follows_base(
    tmp_path: Path, upstream: Path, served: str, git: Git
) -> None:
    checkout = open_checkout(served, tmp_path / "work", "main", depth=1)
    clone = Path(checkout.repo.path)

    assert checkout.base_sha == head_of(git, upstream, "main")
    assert commits(git, clone, "origin/main") == ["third"]
    assert (clone / "shallow").read_text().split() == [checkout.base_sha]
    git("fsck", "--strict", "--no-dangling", cwd=clone)

    write(upstream, {"later.txt": "later\n"})
    git("add", ".", cwd=upstream)
    git("commit", "-qm", "fourth", cwd=upstream)
    moved = refresh_base(checkout.repo, served, "main")

    assert moved == head_of(git, upstream, "main")
    assert commits(git, clone, "origin/main") == ["fourth", "third"]
    git("fsck", "--strict", "--no-dangling", cwd=clone)
    checkout.repo.close()


def test_a_full_clone_over_the_wire_has_all_of_base(
    tmp_path: Path, upstream: Path, served: str, git: Git
) -> None:
    checkout = open_checkout(served, tmp_path / "work", "main")
    clone = Path(checkout.repo.path)

    assert commits(git, clone, "origin/main") == ["third", "second", "first"]
    assert not (clone / "shallow").exists()
    git("fsck", "--strict", "--no-dangling", cwd=clone)
    checkout.repo.close()


def test_a_branch_round_trips_between_shallow_runners_and_the_queen(
    tmp_path: Path, upstream: Path, served: str, git: Git
) -> None:
    first = open_checkout(served, tmp_path / "one", "main", depth=1)
    cut = cut_worktree(first.repo, 7, "main", tmp_path / "one")
    write(cut.path, {"src/app.py": "print('first attempt')\n"})
    assert salvage(cut.path, ["src"], "handed back").sha is not None
    earlier = bundle(first.repo, 7, "main", 10**8)
    assert earlier is not None and earlier.commits == 1

    second = open_checkout(served, tmp_path / "two", "main", depth=1)
    import_bundle(second.repo, 7, earlier.data)
    again = cut_worktree(second.repo, 7, "main", tmp_path / "two")
    assert again.continued and (again.path / "src/app.py").read_text() == "print('first attempt')\n"
    write(again.path, {"src/util.py": "x = 2\n"})
    assert salvage(again.path, ["src"], "finished").sha is not None
    later = bundle(second.repo, 7, "main", 10**8)
    assert later is not None and later.commits == 2

    queen = tmp_path / "queen"
    git("clone", "-q", str(upstream), str(queen), cwd=tmp_path)
    (tmp_path / "later.bundle").write_bytes(later.data)
    git("bundle", "verify", str(tmp_path / "later.bundle"), cwd=queen)
    git("fetch", "-q", str(tmp_path / "later.bundle"), "queen-7:queen-7", cwd=queen)
    assert commits(git, queen, "main..queen-7") == [
        "salvage (finished): 1 file left uncommitted on queen-7",
        "salvage (handed back): 1 file left uncommitted on queen-7",
    ]
    git("fsck", "--strict", "--no-dangling", cwd=queen)
    for checkout in (first, second):
        git("fsck", "--strict", "--no-dangling", cwd=Path(checkout.repo.path))
        checkout.repo.close()


def test_a_shallow_runner_deepens_for_a_bundle_built_on_an_older_base(
    tmp_path: Path, upstream: Path, served: str, git: Git
) -> None:
    first = open_checkout(served, tmp_path / "one", "main", depth=1)
    cut = cut_worktree(first.repo, 7, "main", tmp_path / "one")
    write(cut.path, {"src/app.py": "print('on the old base')\n"})
    salvage(cut.path, ["src"], "handed back")
    earlier = bundle(first.repo, 7, "main", 10**8)
    assert earlier is not None
    for n in (4, 5):
        write(upstream, {f"later{n}.txt": f"{n}\n"})
        git("add", ".", cwd=upstream)
        git("commit", "-qm", f"base moves {n}", cwd=upstream)
    second = open_checkout(served, tmp_path / "two", "main", depth=1)
    with pytest.raises(UnknownPrerequisite) as lacking:
        import_bundle(second.repo, 7, earlier.data)

    assert deepen_base(second.repo, served, "main", lacking.value.shas)

    import_bundle(second.repo, 7, earlier.data)
    clone = Path(second.repo.path)
    git("fsck", "--strict", "--no-dangling", cwd=clone)
    assert commits(git, clone, "origin/main..queen-7") == [
        "salvage (handed back): 1 file left uncommitted on queen-7"
    ]
    for checkout in (first, second):
        checkout.repo.close()


def test_deepening_for_a_commit_base_never_had_ends_with_all_of_base(
    tmp_path: Path, upstream: Path, served: str, git: Git
) -> None:
    checkout = open_checkout(served, tmp_path / "work", "main", depth=1)
    clone = Path(checkout.repo.path)

    assert not deepen_base(checkout.repo, served, "main", ["1" * 40])

    assert not (clone / "shallow").exists()
    assert commits(git, clone, "origin/main") == ["third", "second", "first"]
    git("fsck", "--strict", "--no-dangling", cwd=clone)
    checkout.repo.close()


def test_a_start_on_a_shallow_clone_continues_a_bundle_cut_from_an_older_base(
    tmp_path: Path, upstream: Path, served: str, git: Git
) -> None:
    first = open_checkout(served, tmp_path / "one", "main", depth=1)
    cut = cut_worktree(first.repo, 8, "main", tmp_path / "one")
    write(cut.path, {"src/app.py": "print('earlier attempt')\n"})
    salvage(cut.path, ["src"], "handed back")
    earlier = bundle(first.repo, 8, "main", 10**8)
    assert earlier is not None
    write(upstream, {"later.txt": "later\n"})
    git("add", ".", cwd=upstream)
    git("commit", "-qm", "base moves", cwd=upstream)
    second = open_checkout(served, tmp_path / "two", "main", depth=1)

    _continue_from_bundle(second, 8, earlier.data, served)

    assert second.repo.refs[Ref(b"refs/heads/queen-8")].decode() == earlier.head_sha
    git("fsck", "--strict", "--no-dangling", cwd=Path(second.repo.path))
    for checkout in (first, second):
        checkout.repo.close()
