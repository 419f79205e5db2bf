"""`hive.git.merge`: a fast-forward when base has not moved, a three-way tree merge when
it has, a conflict naming the paths; judged by the git binary (`merge-tree`, `fsck`)."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from dulwich.objects import Commit, ObjectID
from dulwich.repo import Repo

from hive.git.merge import MERGE_IDENTITY, Conflict, Merged, merge
from hive.git.repo import GitError
from hive.git.safety import git_environment
from hive.testing import GIT, git, make_repo

from .building import EXEC, LINK, child, files_of

WHEN = 1_800_000_000
LINES = "".join(f"line {n}\n" for n in range(1, 21))


@pytest.fixture
def repo(tmp_path: Path) -> Iterator[Repo]:
    root = make_repo(tmp_path / "repo", {"a.txt": "a\n", "src/long.txt": LINES, "b.txt": "b\n"})
    with Repo(str(root)) as opened:
        yield opened


def root_of(repo: Repo) -> str:
    return repo.head().decode()


def git_merge_tree(repo: Repo, base: str, head: str) -> str:
    return git("merge-tree", "--write-tree", base, head, cwd=Path(repo.path)).splitlines()[0]


def git_conflicts(repo: Repo, base: str, head: str) -> set[str]:
    """The paths `git merge-tree` finds in conflict (it exits 1 when there are some)."""
    done = subprocess.run(
        [GIT, "merge-tree", "--write-tree", "--name-only", "--no-messages", base, head],
        cwd=repo.path,
        env=git_environment(os.environ),
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode in (0, 1), done.stderr
    return set(done.stdout.splitlines()[1:])


def tree_of(repo: Repo, sha: str) -> str:
    commit = repo.object_store[ObjectID(sha.encode())]
    assert isinstance(commit, Commit)
    return commit.tree.decode()


def test_base_unmoved_fast_forwards_to_the_head(repo: Repo) -> None:
    start = root_of(repo)
    head = child(repo, start, {"a.txt": "A\n"})
    assert merge(repo, start, head, "merge", WHEN) == Merged(head, fast_forward=True)


def test_a_head_already_in_base_leaves_base(repo: Repo) -> None:
    start = root_of(repo)
    base = child(repo, start, {"a.txt": "A\n"})
    assert merge(repo, base, start, "merge", WHEN) == Merged(base, fast_forward=True)
    assert merge(repo, base, base, "merge", WHEN) == Merged(base, fast_forward=True)


def test_moved_base_and_other_files_merge_as_git_would(repo: Repo) -> None:
    start = root_of(repo)
    base = child(repo, start, {"a.txt": "A\n", "new/base.txt": "from base\n"})
    head = child(repo, start, {"b.txt": "B\n", "new/head.txt": "from head\n", "src/long.txt": None})
    done = merge(repo, base, head, "Merge queen-7", WHEN)
    assert isinstance(done, Merged) and not done.fast_forward
    assert tree_of(repo, done.sha) == git_merge_tree(repo, base, head)
    cwd = Path(repo.path)
    assert git("rev-list", "--parents", "-n1", done.sha, cwd=cwd).split() == [done.sha, base, head]
    assert git("log", "-1", "--format=%an <%ae>|%at|%s", done.sha, cwd=cwd) == (
        f"{MERGE_IDENTITY.decode()}|{WHEN}|Merge queen-7"
    )
    git("fsck", "--strict", "--no-dangling", cwd=cwd)
    assert git("cat-file", "-p", f"{done.sha}:new/head.txt", cwd=cwd) == "from head"
    assert git("cat-file", "-p", f"{done.sha}:a.txt", cwd=cwd) == "A"


def test_the_same_arguments_give_the_same_merge_commit(repo: Repo) -> None:
    start = root_of(repo)
    base = child(repo, start, {"a.txt": "A\n"})
    head = child(repo, start, {"b.txt": "B\n"})
    assert merge(repo, base, head, "m", WHEN) == merge(repo, base, head, "m", WHEN)
    assert merge(repo, base, head, "m", WHEN) != merge(repo, base, head, "m", WHEN + 1)


def test_edits_of_separate_lines_of_one_file_merge(repo: Repo) -> None:
    start = root_of(repo)
    base = child(repo, start, {"src/long.txt": LINES.replace("line 2\n", "two\n")})
    head = child(repo, start, {"src/long.txt": LINES.replace("line 18\n", "eighteen\n")})
    done = merge(repo, base, head, "m", WHEN)
    assert isinstance(done, Merged)
    assert tree_of(repo, done.sha) == git_merge_tree(repo, base, head)
    text = files_of(repo, done.sha)["src/long.txt"].decode()
    assert "two\n" in text and "eighteen\n" in text and "line 2\n" not in text


def test_a_mode_change_on_one_side_and_an_edit_on_the_other_both_land(repo: Repo) -> None:
    start = root_of(repo)
    base = child(repo, start, {"a.txt": (EXEC, b"a\n")})
    head = child(repo, start, {"a.txt": "edited\n"})
    done = merge(repo, base, head, "m", WHEN)
    assert isinstance(done, Merged)
    assert tree_of(repo, done.sha) == git_merge_tree(repo, base, head)
    assert git("ls-tree", done.sha, "a.txt", cwd=Path(repo.path)).startswith("100755 blob")
    flipped = merge(repo, head, base, "m", WHEN)  # the mode change on the branch's side
    assert isinstance(flipped, Merged)
    assert git("ls-tree", flipped.sha, "a.txt", cwd=Path(repo.path)).startswith("100755 blob")


def test_both_sides_making_the_same_change_is_no_conflict(repo: Repo) -> None:
    start = root_of(repo)
    base = child(repo, start, {"a.txt": "same\n", "b.txt": None}, at=2)
    head = child(repo, start, {"a.txt": "same\n", "b.txt": None, "c.txt": "c\n"}, at=3)
    done = merge(repo, base, head, "m", WHEN)
    assert isinstance(done, Merged)
    assert files_of(repo, done.sha) == {
        "a.txt": b"same\n",
        "c.txt": b"c\n",
        "src/long.txt": LINES.encode(),
    }


def test_conflicts_name_every_path_and_write_no_commit(repo: Repo) -> None:
    start = root_of(repo)
    base = child(
        repo,
        start,
        {
            "a.txt": "ours\n",
            "b.txt": None,
            "src/long.txt": LINES.replace("line 5\n", "5\n"),
            "added.txt": "ours\n",
            "bin.dat": (0o100644, b"\0ours"),
        },
    )
    head = child(
        repo,
        start,
        {
            "a.txt": "theirs\n",
            "b.txt": "changed\n",
            "src/long.txt": LINES.replace("line 6\n", "6\n"),
            "added.txt": "theirs\n",
            "bin.dat": (0o100644, b"\0theirs"),
            "fine.txt": "fine\n",
        },
    )
    done = merge(repo, base, head, "m", WHEN)
    assert done == Conflict(("a.txt", "added.txt", "b.txt", "bin.dat", "src/long.txt"))
    assert git_conflicts(repo, base, head) == set(done.paths)


def test_a_symlink_changed_on_both_sides_and_a_file_turned_directory_conflict(repo: Repo) -> None:
    start = child(repo, root_of(repo), {"link": (LINK, b"a.txt")})
    base = child(repo, start, {"link": (LINK, b"b.txt"), "a.txt": None, "a.txt/inner": "x\n"})
    head = child(repo, start, {"link": (LINK, b"src"), "a.txt": "edited\n"})
    assert merge(repo, base, head, "m", WHEN) == Conflict(("a.txt", "link"))
    theirs = git_conflicts(repo, base, head)  # git parks the file as `a.txt~<sha>`
    assert "link" in theirs and any(path.startswith("a.txt") for path in theirs)


def test_a_commit_the_repository_lacks_is_refused(repo: Repo) -> None:
    with pytest.raises(GitError, match="has no commit"):
        merge(repo, root_of(repo), "0" * 40, "m", WHEN)


def test_unrelated_histories_are_refused(repo: Repo, tmp_path: Path) -> None:
    with Repo(str(make_repo(tmp_path / "other", {"z.txt": "z\n"}))) as other:
        lone = other.head()
        repo.object_store.add_objects(
            [(other.object_store[sha], None) for sha in other.object_store]
        )
    with pytest.raises(GitError, match="no history"):
        merge(repo, root_of(repo), lone.decode(), "m", WHEN)


def test_criss_cross_history_merges_against_the_merged_bases(repo: Repo) -> None:
    start = root_of(repo)
    left = child(repo, start, {"a.txt": "A\n"})
    right = child(repo, start, {"b.txt": "B\n"})
    one, two = merge(repo, left, right, "one", WHEN), merge(repo, right, left, "two", WHEN)
    assert isinstance(one, Merged) and isinstance(two, Merged)
    base = child(repo, one.sha, {"a.txt": "A again\n"})
    head = child(repo, two.sha, {"c.txt": "C\n"})
    bases = git("merge-base", "--all", base, head, cwd=Path(repo.path)).split()
    assert sorted(bases) == sorted([left, right])
    done = merge(repo, base, head, "m", WHEN)
    assert isinstance(done, Merged)
    assert tree_of(repo, done.sha) == git_merge_tree(repo, base, head)
    assert files_of(repo, done.sha)["a.txt"] == b"A again\n"


def test_a_file_both_sides_changed_over_the_text_limit_conflicts_saying_its_size(
    repo: Repo,
) -> None:
    start = root_of(repo)
    base = child(repo, start, {"src/long.txt": LINES.replace("line 2\n", "2\n")})
    head = child(repo, start, {"src/long.txt": LINES.replace("line 19\n", "19\n")})
    assert isinstance(merge(repo, base, head, "m", WHEN), Merged)  # within the limit
    done = merge(repo, base, head, "m", WHEN, text_max_bytes=100)
    size = len(LINES)  # the largest of the three versions: the base
    assert done == Conflict(
        ("src/long.txt",),
        (
            f"src/long.txt is {size} bytes, over the 100 bytes a line-by-line merge takes "
            "(HIVE_MERGE_TEXT_MAX_BYTES)",
        ),
    )


def test_a_large_packed_file_over_the_limit_is_never_read(repo: Repo, monkeypatch) -> None:
    start = root_of(repo)
    big = "".join(f"row {n}\n" for n in range(200_000))
    start = child(repo, start, {"big.txt": big})
    base = child(repo, start, {"big.txt": "top\n" + big})
    head = child(repo, start, {"big.txt": big + "bottom\n"})
    repo.refs[b"refs/heads/both"] = ObjectID(base.encode())
    repo.refs[b"refs/heads/other"] = ObjectID(head.encode())
    git("repack", "-adq", cwd=Path(repo.path))
    with Repo(repo.path) as packed:
        read = packed.object_store.get_raw

        def no_large_reads(sha):
            kind, data = read(sha)
            assert len(data) < 1_000_000, "a large blob was read"
            return kind, data

        monkeypatch.setattr(packed.object_store, "get_raw", no_large_reads)
        done = merge(packed, base, head, "m", WHEN, text_max_bytes=1_000_000)
    assert isinstance(done, Conflict) and done.paths == ("big.txt",)
    assert "over the 1000000 bytes a line-by-line merge takes" in done.reasons[0]


def test_a_megabyte_of_repeated_lines_edited_on_both_sides_merges_in_a_second(
    repo: Repo,
) -> None:
    lines = ["}\n" if n % 3 else f"    x = {n % 50}\n" for n in range(130_000)]
    start = child(repo, root_of(repo), {"code.txt": "".join(lines)})
    ours, theirs = list(lines), list(lines)
    ours[5], ours[-5] = "top\n", "bottom\n"
    theirs[65_000] = "middle\n"
    base = child(repo, start, {"code.txt": "".join(ours)})
    head = child(repo, start, {"code.txt": "".join(theirs)})
    # this thread's CPU time, not the clock's: a loaded machine stretches the
    # clock, never the work (the bound catches the quadratic path it replaced)
    started = time.thread_time()
    done = merge(repo, base, head, "m", WHEN)
    took = time.thread_time() - started
    assert isinstance(done, Merged)
    assert took < 15.0  # difflib's SequenceMatcher ran for minutes on this
    assert tree_of(repo, done.sha) == git_merge_tree(repo, base, head)


def test_a_file_rewritten_through_on_both_sides_conflicts_saying_so(repo: Repo) -> None:
    lines = [f"{n}\n" for n in range(20_000)]
    start = child(repo, root_of(repo), {"data.txt": "".join(lines)})
    base = child(repo, start, {"data.txt": "".join(f"ours {n}\n" for n in range(20_000))})
    head = child(repo, start, {"data.txt": "".join(f"theirs {n}\n" for n in range(20_000))})
    # this thread's CPU time, not the clock's: a loaded machine stretches the
    # clock, never the work (the bound catches the quadratic path it replaced)
    started = time.thread_time()
    done = merge(repo, base, head, "m", WHEN)
    assert time.thread_time() - started < 20.0
    assert done == Conflict(
        ("data.txt",), ("data.txt changed in too many lines to merge line by line",)
    )
