"""`hive.git.kept`: a tree kept between jobs holds exactly what a fresh checkout of the
commit holds (git's own, and `scratch_tree`'s), whatever the program run in it last did."""

from __future__ import annotations

import errno
import io
import os
import stat
import subprocess
import tarfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from dulwich.repo import Repo

from hive.git.kept import KeptTree, KeptTrees
from hive.git.repo import GitError
from hive.git.scratch import scratch_tree
from hive.testing import make_repo

from .building import EXEC, LINK, child
from .conftest import GIT, git_env

Snapshot = dict[str, tuple[str, bool, bytes]]


@pytest.fixture
def repo(tmp_path: Path) -> Iterator[Repo]:
    files = {
        "a.txt": "a\n",
        "gone.txt": "going\n",
        "src/app.py": "app\n",
        "src/lib/x.py": "x\n",
        "d/old.txt": "a directory that becomes a file\n",
        "f": "a file that becomes a directory\n",
    }
    with Repo(str(make_repo(tmp_path / "repo", files))) as opened:
        yield opened


def snapshot(root: Path) -> Snapshot:
    """Everything under `root`, not following links: kind, exec bit, content or target."""
    seen: Snapshot = {}
    for top, dirs, files in os.walk(root):
        for name in dirs + files:
            full = Path(top) / name
            rel = str(full.relative_to(root))
            st = full.lstat()
            if stat.S_ISLNK(st.st_mode):
                seen[rel] = ("link", False, os.readlink(full).encode())
            elif stat.S_ISDIR(st.st_mode):
                seen[rel] = ("dir", False, b"")
            else:
                seen[rel] = ("file", bool(st.st_mode & 0o100), full.read_bytes())
    return seen


def git_checkout(repo: Repo, sha: str, out: Path, home: Path) -> Snapshot:
    """What the git binary checks out for commit `sha` (its archive, unpacked)."""
    home.mkdir(exist_ok=True)
    tar = subprocess.run(
        [GIT, "--git-dir", repo.controldir(), "archive", sha],
        env=git_env(home),
        capture_output=True,
        check=True,
    ).stdout
    out.mkdir()
    with tarfile.open(fileobj=io.BytesIO(tar)) as archive:
        archive.extractall(out, filter="tar")
    return snapshot(out)


def steps(repo: Repo) -> list[str]:
    """Commits a kept tree goes through: a file deleted, one renamed, a mode change, a
    symlink and its target changed, a directory becoming a file and back."""
    c1 = child(
        repo,
        repo.head().decode(),
        {
            "run.sh": (EXEC, b"#!/bin/sh\n"),
            "link": (LINK, b"src/app.py"),
            "dirlink": (LINK, b"src"),
        },
    )
    cleared = child(repo, c1, {"d/old.txt": None, "f": None})
    c2 = child(
        repo,
        cleared,
        {
            "gone.txt": None,  # deleted
            "src/app.py": None,
            "src/main.py": "app\n",  # renamed
            "run.sh": (0o100644, b"#!/bin/sh\n"),  # mode change
            "a.txt": (EXEC, b"a\n"),
            "link": (LINK, b"src/main.py"),
            "d": "now a file\n",
            "f/inner.txt": "now a directory\n",
            "new/deep/file.txt": "new\n",
        },
    )
    c3 = child(repo, c2, {"src/lib/x.py": "x changed\n", "link": None})
    return [c1, c2, c3, c1, c2]


def test_a_kept_tree_holds_what_git_checks_out_at_every_step(repo: Repo, tmp_path: Path) -> None:
    tree = KeptTree(tmp_path / "kept")
    for n, sha in enumerate(steps(repo)):
        made = tree.bring(repo, sha)
        assert made.path == tmp_path / "kept" and made.sha == sha
        want = git_checkout(repo, sha, tmp_path / f"git-{n}", tmp_path / "home")
        assert snapshot(made.path) == want, f"step {n}"


def test_what_a_check_left_or_changed_never_reaches_the_next_job(
    repo: Repo, tmp_path: Path
) -> None:
    c1, c2, c3, *_ = steps(repo)
    tree = KeptTree(tmp_path / "kept")
    root = tree.bring(repo, c1).path
    (root / "untracked.txt").write_text("left behind\n")
    (root / "src" / "cache").mkdir()
    (root / "src" / "cache" / "x.pyc").write_bytes(b"\0")
    os.chmod(root / "src" / "cache", 0o500)
    (root / "a.txt").write_text("b\n")  # same size, content changed
    os.chmod(root / "src" / "lib", 0o500)
    os.link(root / "run.sh", tmp_path / "outside-link")  # a hard link leading out
    (root / "src" / "lib" / "x.py").unlink()
    os.symlink("/etc/passwd", root / "src" / "lib" / "x.py")
    os.mkfifo(root / "fifo")
    (root / "gone.txt").unlink()
    os.mkdir(root / "gone.txt")
    os.setxattr(root / "src", "user.note", b"left by a check")
    made = tree.bring(repo, c3)
    assert snapshot(made.path) == git_checkout(repo, c3, tmp_path / "git", tmp_path / "home")
    assert stat.S_IMODE(os.lstat(root / "src" / "lib").st_mode) == stat.S_IMODE(tree.dir_mode)
    assert os.lstat(root / "run.sh").st_nlink == 1 and os.listxattr(root / "src") == []
    (tmp_path / "outside-link").write_text("changed from outside\n")
    assert (root / "run.sh").read_text() == "#!/bin/sh\n"
    made = tree.bring(repo, c2)
    assert snapshot(made.path) == git_checkout(repo, c2, tmp_path / "git2", tmp_path / "home")


def test_the_same_commit_again_is_verified_not_trusted(repo: Repo, tmp_path: Path) -> None:
    c1, *_ = steps(repo)
    tree = KeptTree(tmp_path / "kept")
    root = tree.bring(repo, c1).path
    want = snapshot(root)
    (root / "src" / "app.py").write_text("APP\n")
    (root / "extra").write_text("x")
    assert snapshot(tree.bring(repo, c1).path) == want


def test_a_change_in_the_tick_of_the_last_write_is_found_by_content(
    repo: Repo, tmp_path: Path
) -> None:
    c1, c2, *_ = steps(repo)
    tree = KeptTree(tmp_path / "kept")
    root = tree.bring(repo, c1).path
    tree.bring(repo, c2)
    assert "src/main.py" in tree.racy
    (root / "src" / "main.py").write_text("APP\n")
    # as if the write had moved no stat field (the clock had not ticked)
    tree.held["src/main.py"].st = os.lstat(root / "src" / "main.py")
    tree.bring(repo, c2)
    assert (root / "src" / "main.py").read_text() == "app\n"


def test_a_gitlink_is_an_empty_directory_again_after_a_check_filled_it(
    repo: Repo, tmp_path: Path
) -> None:
    sha = child(repo, repo.head().decode(), {"vendor/sub": (0o160000, b"")})
    tree = KeptTree(tmp_path / "kept")
    root = tree.bring(repo, sha).path
    (root / "vendor" / "sub" / "cloned").write_text("x\n")
    tree.bring(repo, sha)
    assert (root / "vendor" / "sub").is_dir() and os.listdir(root / "vendor" / "sub") == []
    os.chmod(root / "vendor" / "sub", 0o500)
    tree.bring(repo, sha)
    assert os.lstat(root / "vendor" / "sub").st_mode == tree.dir_mode


def test_symlinks_are_flattened_as_a_fresh_tree_flattens_them(repo: Repo, tmp_path: Path) -> None:
    base = repo.head().decode()
    c1 = child(repo, base, {"x/file": "x\n", "up": (LINK, b"x/../.."), "abs": (LINK, b"/etc")})
    # x becomes a link two levels down: `up` now resolves inside, `abs` still leads out
    cleared = child(repo, c1, {"x/file": None})
    c2 = child(repo, cleared, {"x": (LINK, b"sub/deeper"), "sub/deeper/f": "f\n"})
    tree = KeptTree(tmp_path / "kept")
    for n, sha in enumerate([c1, c2, c1, base]):
        made = tree.bring(repo, sha)
        fresh = scratch_tree(repo, sha, tmp_path / f"fresh-{n}")
        assert snapshot(made.path) == snapshot(fresh.path), f"step {n}"
        assert (
            made.flattened
            == fresh.flattened
            == (("abs",) if sha == c2 else ("abs", "up"))[: 0 if sha == base else 2]
        )
    assert tree.flattened == ()


def test_a_refused_path_element_raises_and_leaves_nothing(repo: Repo, tmp_path: Path) -> None:
    c1, *_ = steps(repo)
    bad = child(repo, c1, {"sub/.git/config": "[core]\n"})
    trees = KeptTrees(tmp_path / "checks")
    first = trees.take(repo, c1)
    trees.give_back(first)
    with pytest.raises(GitError, match="refusing"):
        trees.take(repo, bad)
    assert not first.path.exists()
    with pytest.raises(GitError, match="no commit"):
        trees.take(repo, "1" * 40)
    again = trees.take(repo, c1)
    assert again.path == first.path and (again.path / "run.sh").exists()


def test_a_pool_gives_each_taker_its_own_tree_and_reuses_one_given_back(
    repo: Repo, tmp_path: Path
) -> None:
    c1, c2, *_ = steps(repo)
    trees = KeptTrees(tmp_path / "checks")
    one, two = trees.take(repo, c1), trees.take(repo, c2)
    assert one.path != two.path
    assert (one.path / "gone.txt").exists() and not (two.path / "gone.txt").exists()
    trees.give_back(two)
    trees.give_back(two)  # twice is safe
    assert trees.take(repo, c1).path == two.path
    assert not (two.path / "f").is_dir()


def test_leftovers_of_an_earlier_process_are_removed_at_first_use(
    repo: Repo, tmp_path: Path
) -> None:
    c1, *_ = steps(repo)
    leftover = tmp_path / "checks" / "kept-0"
    (leftover / "deep").mkdir(parents=True)
    (leftover / "deep" / "file").write_text("old\n")
    os.chmod(leftover / "deep", 0o500)
    made = KeptTrees(tmp_path / "checks").take(repo, c1)
    assert made.path == leftover and not (leftover / "deep").exists()
    assert snapshot(made.path) == git_checkout(repo, c1, tmp_path / "git", tmp_path / "home")


def test_a_filesystem_without_attributes_is_no_error(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def unsupported(path: object, follow_symlinks: bool = True) -> list[str]:
        raise OSError(errno.ENOTSUP, "Operation not supported")

    c1, c2, *_ = steps(repo)
    tree = KeptTree(tmp_path / "kept")
    tree.bring(repo, c1)
    monkeypatch.setattr(os, "listxattr", unsupported)
    made = tree.bring(repo, c2)
    assert snapshot(made.path) == git_checkout(repo, c2, tmp_path / "git", tmp_path / "home")
