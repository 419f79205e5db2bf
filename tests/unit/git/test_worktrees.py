from __future__ import annotations

import os
from pathlib import Path

import pytest
from dulwich.objects import Blob, ObjectID, Tree
from dulwich.refs import Ref
from dulwich.repo import Repo

from hive.git.checkout import write_tree
from hive.git.index import IndexFile
from hive.git.repo import GitError
from hive.git.worktrees import cut_worktree, list_worktrees, prune_worktrees, remove_worktree

from .building import EXEC, FILE, LINK, child
from .conftest import Git, head_of, write


def test_cut_branches_from_base_and_git_agrees(clone: Repo, tmp_path: Path, git: Git) -> None:
    cut = cut_worktree(clone, 7, "main", tmp_path / "work")
    repo_dir = Path(clone.path)
    assert cut.path == tmp_path / "work" / "queen-7"
    assert (cut.continued, cut.reused, cut.leftover) == (False, False, 0)
    assert cut.head_sha == head_of(git, repo_dir, "refs/remotes/origin/main")
    listed = git("worktree", "list", "--porcelain", cwd=repo_dir)
    assert f"worktree {cut.path}\nHEAD {cut.head_sha}\nbranch refs/heads/queen-7" in listed
    assert git("status", "--porcelain", cwd=cut.path) == ""
    assert (cut.path / "src" / "app.py").read_text() == "print(2)\n" * 30
    git("fsck", "--strict", cwd=repo_dir)


def test_cut_continues_an_existing_branch(clone: Repo, tmp_path: Path, git: Git) -> None:
    first = cut_worktree(clone, 7, "main", tmp_path / "work")
    write(first.path, {"src/new.py": "y = 2\n"})
    git("add", ".", cwd=first.path)
    git("commit", "-qm", "bee work", cwd=first.path)
    work_head = head_of(git, first.path, "HEAD")
    remove_worktree(clone, first.path)

    again = cut_worktree(clone, 7, "main", tmp_path / "work")

    assert again.continued and not again.reused
    assert again.head_sha == work_head
    assert (again.path / "src" / "new.py").read_text() == "y = 2\n"
    assert git("status", "--porcelain", cwd=again.path) == ""


def test_cut_reuses_a_leftover_worktree_and_counts_its_uncommitted_files(
    clone: Repo, tmp_path: Path, git: Git
) -> None:
    first = cut_worktree(clone, 3, "main", tmp_path / "work")
    write(first.path, {"README.md": "changed\n", "scratch.txt": "notes\n"})
    os.remove(first.path / "src" / "util.py")

    again = cut_worktree(clone, 3, "main", tmp_path / "work")

    assert again.reused and again.continued
    assert again.leftover == 3
    assert (again.path / "scratch.txt").read_text() == "notes\n"  # never cleaned
    assert len(git("status", "--porcelain", cwd=again.path).splitlines()) == 3


def test_leftover_count_skips_ignored_files(clone: Repo, tmp_path: Path) -> None:
    first = cut_worktree(clone, 3, "main", tmp_path / "work")
    write(first.path, {".gitignore": "build/\n", "build/out.o": "x", "kept.txt": "k"})
    assert cut_worktree(clone, 3, "main", tmp_path / "work").leftover == 2


def test_cut_refuses_a_directory_that_is_not_its_worktree(clone: Repo, tmp_path: Path) -> None:
    (tmp_path / "work" / "queen-9").mkdir(parents=True)
    (tmp_path / "work" / "queen-9" / "mine.txt").write_text("someone's")
    with pytest.raises(GitError, match="is not the worktree of queen-9"):
        cut_worktree(clone, 9, "main", tmp_path / "work")
    assert (tmp_path / "work" / "queen-9" / "mine.txt").exists()


def test_cut_refuses_an_unknown_base(clone: Repo, tmp_path: Path) -> None:
    with pytest.raises(GitError, match="no commit named 'nope'"):
        cut_worktree(clone, 4, "nope", tmp_path / "work")


@pytest.mark.parametrize("issue", [0, -1, "7", True])
def test_cut_refuses_an_issue_that_is_not_a_positive_integer(
    clone: Repo, tmp_path: Path, issue: object
) -> None:
    with pytest.raises(GitError, match="positive integer"):
        cut_worktree(clone, issue, "main", tmp_path / "work")  # type: ignore[arg-type]


def test_remove_deletes_directory_and_registration(clone: Repo, tmp_path: Path, git: Git) -> None:
    cut = cut_worktree(clone, 5, "main", tmp_path / "work")
    remove_worktree(clone, cut.path)
    assert not cut.path.exists()
    assert "queen-5" not in git("worktree", "list", cwd=Path(clone.path))
    assert head_of(git, Path(clone.path), "refs/heads/queen-5") == cut.head_sha  # branch stays
    remove_worktree(clone, cut.path)  # twice is fine


def test_remove_takes_the_registration_of_that_path_not_one_of_the_same_name(
    clone: Repo, tmp_path: Path, git: Git
) -> None:
    ours = cut_worktree(clone, 5, "main", tmp_path / "work")
    repo_dir = Path(clone.path)
    # git names the second registration of a directory called queen-5 otherwise
    other = tmp_path / "elsewhere" / "queen-5"
    git("worktree", "add", "-q", "-b", "side", str(other), ours.head_sha, cwd=repo_dir)
    remove_worktree(clone, other)
    assert not other.exists()
    assert ours.path.exists()
    listed = git("worktree", "list", "--porcelain", cwd=repo_dir)
    assert f"worktree {ours.path}\n" in listed and str(other) not in listed
    remove_worktree(clone, ours.path)
    assert list_worktrees(clone) == []


def test_prune_forgets_worktrees_whose_directory_is_gone(
    clone: Repo, tmp_path: Path, git: Git
) -> None:
    gone = cut_worktree(clone, 5, "main", tmp_path / "work")
    kept = cut_worktree(clone, 6, "main", tmp_path / "work")
    import shutil

    shutil.rmtree(gone.path)
    assert prune_worktrees(clone) == ["queen-5"]
    listed = git("worktree", "list", cwd=Path(clone.path))
    assert "queen-5" not in listed and str(kept.path) in listed


def test_listing_reports_issue_age_and_size(clone: Repo, tmp_path: Path) -> None:
    cut = cut_worktree(clone, 12, "main", tmp_path / "work")
    write(cut.path, {"big.bin": "x" * 10_000})
    cut_at = (Path(clone.path) / "worktrees" / "queen-12" / "gitdir").stat().st_mtime

    [info] = list_worktrees(clone, now=cut_at + 90)

    assert (info.path, info.branch, info.issue, info.head_sha) == (
        cut.path,
        "queen-12",
        12,
        cut.head_sha,
    )
    assert info.age_seconds == pytest.approx(90)
    assert info.size_bytes >= 10_000 + len("print(2)\n" * 30)
    assert not info.prunable


def test_git_keeps_our_worktree_on_prune_and_can_remove_it(
    clone: Repo, tmp_path: Path, git: Git
) -> None:
    cut = cut_worktree(clone, 13, "main", tmp_path / "work")
    repo_dir = Path(clone.path)
    git("worktree", "prune", cwd=repo_dir)
    assert str(cut.path) in git("worktree", "list", cwd=repo_dir)
    git("worktree", "remove", str(cut.path), cwd=repo_dir)
    assert list_worktrees(clone) == []


def test_cut_refuses_a_branch_checked_out_elsewhere(clone: Repo, tmp_path: Path) -> None:
    first = cut_worktree(clone, 14, "main", tmp_path / "work")
    with pytest.raises(GitError, match=f"queen-14 is checked out at {first.path}"):
        cut_worktree(clone, 14, "main", tmp_path / "other")
    assert (first.path / "README.md").exists()


def test_cut_writes_every_kind_of_entry_of_a_wide_tree_as_git_reads_it(
    clone: Repo, tmp_path: Path, git: Git
) -> None:
    base = clone.refs[Ref(b"refs/remotes/origin/main")].decode()
    files: dict[str, str | tuple[int, bytes] | None] = {
        f"wide/d{n % 7}/f{n}.txt": f"file {n}\n" * (n % 50) for n in range(400)
    }
    files["big.bin"] = (FILE, bytes(range(256)) * (40 << 10))  # over the writer's queue
    files["run.sh"] = (EXEC, b"#!/bin/sh\necho hi\n")
    files["link"] = (LINK, b"wide/d0/f0.txt")
    clone.refs[Ref(b"refs/heads/queen-9")] = ObjectID(child(clone, base, files).encode())

    cut = cut_worktree(clone, 9, "main", tmp_path / "work")

    assert git("status", "--porcelain", cwd=cut.path) == ""
    assert (cut.path / "big.bin").stat().st_size == 10 << 20
    assert os.access(cut.path / "run.sh", os.X_OK) and os.readlink(cut.path / "link")
    assert (cut.path / "wide" / "d0" / "f399.txt").read_text() == "file 399\n" * 49


def test_a_name_the_filesystem_refuses_fails_the_cut_and_leaves_nothing(
    clone: Repo, tmp_path: Path
) -> None:
    base = clone.refs[Ref(b"refs/remotes/origin/main")].decode()
    head = child(clone, base, {"a/" + "n" * 300: "too long a name\n"})
    clone.refs[Ref(b"refs/heads/queen-9")] = ObjectID(head.encode())

    with pytest.raises(OSError, match="File name too long"):
        cut_worktree(clone, 9, "main", tmp_path / "work")

    assert not (tmp_path / "work" / "queen-9").exists()
    assert list_worktrees(clone) == []


@pytest.mark.parametrize("name", [b"../escaped.txt", b"a/../../escaped.txt", b".git", b".."])
def test_a_tree_entry_naming_a_path_out_of_the_worktree_is_refused(
    clone: Repo, tmp_path: Path, name: bytes
) -> None:
    blob = Blob.from_string(b"out\n")
    tree = Tree()
    tree.add(name, FILE, blob.id)
    clone.object_store.add_objects([(blob, None), (tree, None)])
    work = tmp_path / "work" / "deep"
    work.mkdir(parents=True)
    with pytest.raises(GitError, match="refusing to check out the path element"):
        write_tree(clone.object_store, tree.id, work, IndexFile(tmp_path / "index"))
    assert not (tmp_path / "work" / "escaped.txt").exists()
    assert os.listdir(work) == []
