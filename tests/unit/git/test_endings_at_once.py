"""Endings side by side: each salvages its worktree and bundles its branch with a `Repo`
object of its own on the one shared repository, and no lock between them."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from hive.git.bundles import BundleOut, bundle
from hive.git.repo import Checkout, open_checkout, own_repo
from hive.git.salvage import salvage
from hive.git.worktrees import cut_worktree

from .conftest import Git, head_of, write

MAX_BYTES = 100 * 1024 * 1024
ISSUES = (3, 4)


@pytest.fixture
def checkout(tmp_path: Path, upstream: Path) -> Iterator[Checkout]:
    opened = open_checkout(str(upstream), tmp_path / "work", "main")
    yield opened
    opened.repo.close()


def test_own_repo_is_a_separate_object_of_the_same_repository(checkout: Checkout) -> None:
    with own_repo(checkout) as repo:
        assert repo is not checkout.repo
        assert repo.object_store is not checkout.repo.object_store
        assert Path(repo.path).resolve() == Path(checkout.repo.path).resolve()
        assert (
            repo.refs[b"refs/remotes/origin/main"]
            == checkout.repo.refs[b"refs/remotes/origin/main"]
        )


def test_each_checkout_has_its_own_lock(tmp_path: Path, upstream: Path) -> None:
    first = open_checkout(str(upstream), tmp_path / "one", "main")
    second = open_checkout(str(upstream), tmp_path / "two", "main")
    try:
        with first.lock:
            assert second.lock.acquire(blocking=False)
            second.lock.release()
    finally:
        first.repo.close()
        second.repo.close()


def test_two_endings_at_once_both_bundle_their_salvaged_work(
    checkout: Checkout, upstream: Path, tmp_path: Path, git: Git
) -> None:
    cuts = {issue: cut_worktree(checkout.repo, issue, "main", checkout.workdir) for issue in ISSUES}
    for issue, cut in cuts.items():
        write(cut.path, {f"src/bee{issue}.py": f"done = {issue}\n"})
        salvage(cut.path, ["src"], "finished")  # a commit of the bee's own
        write(cut.path, {"README.md": f"left by bee {issue}\n"})  # left uncommitted
    start = threading.Barrier(len(ISSUES))
    outs: dict[int, BundleOut | None] = {}
    failures: list[BaseException] = []

    def ending(issue: int) -> None:
        try:
            start.wait(10)
            salvage(cuts[issue].path, ["README.md"], "finished")
            with own_repo(checkout) as repo:
                outs[issue] = bundle(repo, issue, "main", MAX_BYTES)
        except BaseException as err:
            failures.append(err)

    threads = [threading.Thread(target=ending, args=(issue,)) for issue in ISSUES]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert failures == []

    for issue in ISSUES:
        out = outs[issue]
        assert out is not None and out.commits == 2
        assert out.head_sha == head_of(git, cuts[issue].path, "HEAD")
        path = tmp_path / f"queen-{issue}.bundle"
        path.write_bytes(out.data)
        assert "is okay" in git("bundle", "verify", str(path), cwd=upstream, check=False)
        git(
            "fetch",
            "-q",
            str(path),
            f"refs/heads/queen-{issue}:refs/heads/got-{issue}",
            cwd=upstream,
        )
        got = f"got-{issue}"
        assert git("show", f"{got}:README.md", cwd=upstream) == f"left by bee {issue}\n"
        assert git("show", f"{got}:src/bee{issue}.py", cwd=upstream) == f"done = {issue}\n"
    git("fsck", "--strict", cwd=upstream)
