"""A hostile repository runs nothing and writes nothing outside, and bad input is refused
with one clear line."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from dulwich.objects import Blob, Commit, ObjectID, ShaFile, Tree
from dulwich.refs import Ref
from dulwich.repo import Repo

from hive.git.bundles import bundle
from hive.git.importing import import_bundle
from hive.git.repo import GitError, open_checkout
from hive.git.safety import (
    BoundaryError,
    UnsafeGitError,
    boundary_path,
    check_url,
    git_environment,
    plain_path,
)
from hive.git.salvage import salvage
from hive.git.worktrees import cut_worktree
from hive.rules import shape

from .conftest import Git, write

HOOKS = (
    "pre-commit",
    "commit-msg",
    "post-commit",
    "post-checkout",
    "reference-transaction",
    "pre-auto-gc",
    "post-index-change",
    "post-rewrite",
    "pre-receive",
    "post-update",
)


def arm(repo_dir: Path, marker: Path) -> None:
    """Every hook, and every config that names a program, would create `marker`."""
    hooks = repo_dir / "hooks"
    hooks.mkdir(exist_ok=True)
    for name in HOOKS:
        hook = hooks / name
        hook.write_text(f"#!/bin/sh\ntouch {marker}\n")
        hook.chmod(0o755)
    program = f"sh -c 'touch {marker}; cat'"
    with open(repo_dir / "config", "a") as config:
        config.write(
            "[diff]\n\texternal = " + program + "\n"
            '[diff "evil"]\n\ttextconv = ' + program + "\n"
            '[filter "evil"]\n\tclean = ' + program + "\n\tsmudge = " + program + "\n"
            "[core]\n\tfsmonitor = " + program + "\n"
            "[commit]\n\tgpgSign = true\n"
            "[gpg]\n\tprogram = " + program + "\n"
        )


def test_a_hostile_repository_runs_nothing(tmp_path: Path, upstream: Path, git: Git) -> None:
    marker = tmp_path / "ran"
    write(upstream, {".gitattributes": "* filter=evil diff=evil\n"})
    git("add", ".gitattributes", cwd=upstream)
    git("commit", "-qm", "attributes", cwd=upstream)
    arm(upstream / ".git", marker)
    checkout = open_checkout(str(upstream), tmp_path / "work", "main")
    arm(Path(checkout.repo.path), marker)

    cut = cut_worktree(checkout.repo, 1, "main", tmp_path / "work")
    admin = Path(checkout.repo.path) / "worktrees" / "queen-1"
    (admin / "config.worktree").write_text(f"[diff]\n\texternal = sh -c 'touch {marker}'\n")
    write(cut.path, {"src/app.py": "changed\n"})
    salvage(cut.path, ["src"], "finished")
    out = bundle(checkout.repo, 1, "main", 10**8)
    assert out is not None
    queen = tmp_path / "queen"
    git("clone", "-q", str(upstream), str(queen), cwd=tmp_path)
    arm(queen / ".git", marker)
    import_bundle(Repo(str(queen)), 1, out.data)
    cut_worktree(checkout.repo, 1, "main", tmp_path / "work")  # reuse: a status walk

    assert not marker.exists()


def test_a_symlink_out_of_the_worktree_is_not_a_boundary(tmp_path: Path, clone: Repo) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("theirs\n")
    cut = cut_worktree(clone, 2, "main", tmp_path / "work")
    os.symlink(outside, cut.path / "escape")
    with pytest.raises(BoundaryError, match="leads outside the repository via a symlink"):
        boundary_path(cut.path, "escape/secret.txt")

    result = salvage(cut.path, ["escape/secret.txt"], "finished")

    assert (result.sha, result.outside) == (None, ("escape",))
    assert [p.name for p in outside.iterdir()] == ["secret.txt"]


def test_a_boundary_file_the_bee_made_a_symlink_out_is_left_and_the_rest_salvaged(
    tmp_path: Path, clone: Repo, git: Git
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("do not copy\n")
    cut = cut_worktree(clone, 2, "main", tmp_path / "work")
    os.remove(cut.path / "src" / "app.py")
    os.symlink(secret, cut.path / "src" / "app.py")
    write(cut.path, {"src/util.py": "x = 9\n"})

    result = salvage(cut.path, ["src/app.py", "src/util.py"], "finished")

    assert (result.committed, result.outside) == (("src/util.py",), ("src/app.py",))
    assert git("show", "HEAD:src/app.py", cwd=cut.path) == "print(2)\n" * 30


def test_a_symlink_leading_out_is_never_salvaged_one_inside_is(
    tmp_path: Path, clone: Repo, git: Git
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("do not copy\n")
    cut = cut_worktree(clone, 2, "main", tmp_path / "work")
    os.symlink(secret, cut.path / "src" / "link")
    os.symlink("../README.md", cut.path / "src" / "readme")

    result = salvage(cut.path, ["src"], "finished")

    assert (result.committed, result.outside) == (("src/readme",), ("src/link",))
    assert git("cat-file", "-p", "HEAD:src/readme", cwd=cut.path) == "../README.md"


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("../x", "climbs out with '..'"),
        ("src/../../x", "climbs out with '..'"),
        ("/etc/passwd", "is absolute"),
        (".git/config", "points into .git"),
        ("", "is empty"),
        (".", "names the whole repository"),
        ("a\\b", "backslash"),
        ("src/a\nb.py", "control character"),
        ("src/\x00", "control character"),
        ("./.git/config", "points into .git"),
    ],
)
def test_boundary_paths_that_leave_the_repository_are_refused(
    tmp_path: Path, path: str, message: str
) -> None:
    with pytest.raises(BoundaryError, match=message):
        boundary_path(tmp_path, path)


def test_the_git_check_gives_the_shape_rule_its_answer_for_every_text() -> None:
    for path in ("./src/app.py", "src//app.py", "src/", ".git/config", "a\nb", "../x", ""):
        plain = shape.plain_path(path)
        if isinstance(plain, shape.PathFault):
            with pytest.raises(BoundaryError, match=re.escape(plain.value)):
                plain_path(path)
        else:
            assert plain_path(path) == plain


def test_a_boundary_whose_text_is_plain_but_leads_out_by_a_symlink_is_refused(
    tmp_path: Path,
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    root = tmp_path / "repo"
    root.mkdir()
    os.symlink(outside, root / "out")
    assert shape.plain_path("out/x.py") == "out/x.py"  # the text alone cannot tell
    with pytest.raises(BoundaryError, match="leads outside the repository via a symlink"):
        boundary_path(root, "./out/x.py")
    assert boundary_path(root, "./in/x.py") == "in/x.py"


def test_a_boundary_through_a_symlinked_directory_inside_is_refused(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    os.symlink("real", tmp_path / "alias")
    assert boundary_path(tmp_path, "./real/new.py") == "real/new.py"
    with pytest.raises(BoundaryError, match="passes through the symlink 'alias'"):
        boundary_path(tmp_path, "alias/new.py")


def put(repo: Repo, obj: ShaFile) -> bytes:
    repo.object_store.add_object(obj)
    return obj.id


def branch_with_tree(repo: Repo, issue: int, raw_tree: bytes) -> None:
    tree = ShaFile.from_raw_string(Tree.type_num, raw_tree)
    commit = Commit()
    commit.tree = put(repo, tree)
    commit.author = commit.committer = b"x <x@x>"
    commit.author_time = commit.commit_time = 0
    commit.author_timezone = commit.commit_timezone = 0
    commit.message = b"hostile\n"
    repo.refs[Ref(f"refs/heads/queen-{issue}".encode())] = ObjectID(put(repo, commit))


def test_checkout_never_writes_through_a_symlink_in_the_tree(tmp_path: Path, clone: Repo) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    link = put(clone, Blob.from_string(str(outside).encode()))
    inner = Tree()
    inner.add(b"planted", 0o100644, ObjectID(put(clone, Blob.from_string(b"gotcha"))))
    raw = b"120000 a\0" + bytes.fromhex(link.decode())
    raw += b"40000 a\0" + bytes.fromhex(put(clone, inner).decode())
    branch_with_tree(clone, 3, raw)  # `a` twice: a symlink out, then a directory
    try:
        cut = cut_worktree(clone, 3, "main", tmp_path / "work")
    except (GitError, OSError):
        assert not (tmp_path / "work" / "queen-3").exists()  # a failed cut leaves nothing
    else:
        assert not (cut.path / "a").is_symlink()
    assert list(outside.iterdir()) == []


def test_checkout_refuses_a_dot_git_entry(tmp_path: Path, clone: Repo) -> None:
    blob = put(clone, Blob.from_string(b"[core]\n"))
    branch_with_tree(clone, 4, b"100644 .git\0" + bytes.fromhex(blob.decode()))
    with pytest.raises(GitError, match=r"path element b'\.git'"):
        cut_worktree(clone, 4, "main", tmp_path / "work")


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("ext::sh -c touch% /tmp/x", "the ext:: transport: it runs a command"),
        ("fd::3", "the fd:: transport"),
        ("ssh://host/repo", "scheme 'ssh'"),
        ("host:repo", "host:path is ssh"),
        ("ftp://host/repo", "scheme 'ftp'"),
        ("-uevil", "looks like an option"),
        (" ", "is empty"),
    ],
)
def test_urls_that_would_run_a_program_are_refused(url: str, message: str) -> None:
    with pytest.raises(UnsafeGitError, match=message):
        check_url(url)


def test_open_checkout_refuses_a_command_transport_before_touching_disk(tmp_path: Path) -> None:
    with pytest.raises(UnsafeGitError):
        open_checkout("ext::sh -c 'touch x'", tmp_path / "work", "main")
    assert not (tmp_path / "work").exists()


@pytest.mark.parametrize("url", ["https://example.com/r.git", "file:///srv/r", "/srv/r", "r"])
def test_plain_paths_and_urls_pass(url: str) -> None:
    assert check_url(url) == url


def test_helper_environment_carries_no_credential() -> None:
    env = git_environment(
        {
            "PATH": "/usr/bin",
            "HOME": "/home/h",
            "HIVE_WORKER_KEY": "sk-1",
            "HIVE_KEY": "sk-2",
            "GIT_ASKPASS": "/bin/steal",
            "AWS_SECRET_ACCESS_KEY": "s",
            "GITHUB_TOKEN": "t",
        }
    )
    assert env["PATH"] == "/usr/bin" and env["HOME"] == "/home/h"
    assert not any("KEY" in name or "TOKEN" in name or "ASKPASS" in name for name in env)
    assert env["GIT_CONFIG_NOSYSTEM"] == "1" and env["GIT_TERMINAL_PROMPT"] == "0"
