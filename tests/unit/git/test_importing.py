from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from dulwich.repo import Repo

from hive.git.bundles import bundle
from hive.git.importing import BadBundle, UnknownPrerequisite, import_bundle
from hive.git.salvage import salvage
from hive.git.worktrees import cut_worktree

from .conftest import Git, head_of, write

MAX_BYTES = 100 * 1024 * 1024


@pytest.fixture
def queen(tmp_path: Path, upstream: Path, git: Git) -> Iterator[Repo]:
    """The Queen's own checkout: a plain git clone of upstream."""
    git("clone", "-q", str(upstream), str(tmp_path / "queen"), cwd=tmp_path)
    repo = Repo(str(tmp_path / "queen"))
    yield repo
    repo.close()


def bee_bundle(clone: Repo, tmp_path: Path, issue: int, text: str) -> bytes:
    cut = cut_worktree(clone, issue, "main", tmp_path / "work")
    write(cut.path, {"src/app.py": text})
    salvage(cut.path, ["src/app.py"], "finished")
    out = bundle(clone, issue, "main", MAX_BYTES)
    assert out is not None
    return out.data


def test_import_of_our_bundle_passes_fsck(
    clone: Repo, queen: Repo, tmp_path: Path, git: Git
) -> None:
    data = bee_bundle(clone, tmp_path, 8, "print('bee')\n")
    done = import_bundle(queen, 8, data)
    queen_dir = Path(queen.path)
    assert done.changed and done.previous_sha is None and done.branch == "queen-8"
    assert head_of(git, queen_dir, "queen-8") == done.head_sha
    assert git("show", "queen-8:src/app.py", cwd=queen_dir) == "print('bee')\n"
    git("fsck", "--strict", "--no-dangling", cwd=queen_dir)


def test_import_of_a_bundle_written_by_git(
    queen: Repo, upstream: Path, tmp_path: Path, git: Git
) -> None:
    git("checkout", "-qb", "queen-4", cwd=upstream)
    write(upstream, {"src/app.py": "print(2)\n" * 29 + "print(4)\n", "new.txt": "n\n"})
    git("add", ".", cwd=upstream)
    git("commit", "-qm", "work", cwd=upstream)
    path = tmp_path / "git.bundle"
    git("bundle", "create", "-q", str(path), "main..queen-4", cwd=upstream)

    done = import_bundle(queen, 4, path)

    assert done.head_sha == head_of(git, upstream, "queen-4")
    git("fsck", "--strict", cwd=Path(queen.path))
    assert git("show", "queen-4:new.txt", cwd=Path(queen.path)) == "n\n"


def test_import_replaces_an_older_branch_and_is_a_no_op_when_equal(
    clone: Repo, queen: Repo, tmp_path: Path, git: Git
) -> None:
    first = import_bundle(queen, 8, bee_bundle(clone, tmp_path, 8, "one\n"))
    newer = bee_bundle(clone, tmp_path, 8, "two\n")

    second = import_bundle(queen, 8, newer)
    third = import_bundle(queen, 8, newer)

    assert second.previous_sha == first.head_sha and second.changed
    assert (third.changed, third.head_sha) == (False, second.head_sha)
    assert git("show", "queen-8:src/app.py", cwd=Path(queen.path)) == "two\n"


def test_import_without_the_base_names_the_missing_prerequisite(
    clone: Repo, tmp_path: Path, git: Git
) -> None:
    data = bee_bundle(clone, tmp_path, 8, "x\n")
    empty = tmp_path / "empty"
    git("init", "-q", str(empty), cwd=tmp_path)
    prerequisite = data.split(b"\n")[1][1:41].decode()
    with pytest.raises(
        UnknownPrerequisite, match=f"lacks the bundle's prerequisite commit {prerequisite}"
    ):
        import_bundle(Repo(str(empty)), 8, data)


def test_import_refuses_a_bundle_for_another_issue(
    clone: Repo, queen: Repo, tmp_path: Path
) -> None:
    data = bee_bundle(clone, tmp_path, 8, "x\n")
    with pytest.raises(BadBundle, match="carries refs/heads/queen-8, not refs/heads/queen-9"):
        import_bundle(queen, 9, data)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"hello\n", "not a git bundle"),
        (b"# v2 git bundle\n" + b"a" * 40 + b" refs/heads/queen-1\n", "ends inside its header"),
        (b"# v2 git bundle\n-xyz c\n\nPACK", "names b'xyz', not an object id"),
        (b"# v2 git bundle\n" + b"a" * 40 + b" refs/heads/queen-1\n\n", "holds no pack"),
    ],
)
def test_import_refuses_bytes_that_are_not_a_bundle(queen: Repo, data: bytes, message: str) -> None:
    with pytest.raises(BadBundle, match=message):
        import_bundle(queen, 1, data)


def test_a_damaged_pack_is_a_clear_error(clone: Repo, queen: Repo, tmp_path: Path) -> None:
    data = bee_bundle(clone, tmp_path, 8, "x\n")
    with pytest.raises(BadBundle, match="pack cannot be read"):
        import_bundle(queen, 8, data[:-30] + b"\0" * 30)
