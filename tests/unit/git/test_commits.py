"""`hive.git.commits`: a repository of one commit, and a commit of what is staged, judged
by the git binary; no hook runs."""

from __future__ import annotations

from pathlib import Path

from dulwich.repo import Repo

from hive.git.commits import commit_staged, init_repository

from .conftest import Git, write

AUTHOR = b"Bee <bee@hive.invalid>"
FILES = {"README.md": "hello\n", "src/app.py": "print(1)\n"}


def test_init_repository_commits_every_file_on_the_branch(tmp_path: Path, git: Git) -> None:
    root = tmp_path / "made"
    sha = init_repository(root, FILES, branch="trunk", message="first\n", author=AUTHOR)
    assert git("rev-parse", "HEAD", cwd=root).strip() == sha
    assert git("symbolic-ref", "HEAD", cwd=root).strip() == "refs/heads/trunk"
    assert git("ls-tree", "-r", "--name-only", "HEAD", cwd=root).split() == sorted(FILES)
    assert git("log", "--format=%an <%ae>|%s", cwd=root).strip() == "Bee <bee@hive.invalid>|first"
    assert git("status", "--porcelain", cwd=root) == ""


def test_a_fixed_moment_gives_the_same_sha_for_the_same_files(tmp_path: Path) -> None:
    made = [
        init_repository(tmp_path / name, FILES, branch="main", message="m\n", author=AUTHOR, at=1)
        for name in ("one", "two")
    ]
    assert made[0] == made[1]


def test_commit_staged_runs_no_hook(tmp_path: Path, git: Git) -> None:
    root = tmp_path / "made"
    init_repository(root, FILES, branch="main", message="first\n", author=AUTHOR)
    marker = tmp_path / "hook-ran"
    for name in ("pre-commit", "commit-msg", "post-commit"):
        hook = root / ".git" / "hooks" / name
        hook.parent.mkdir(exist_ok=True)
        hook.write_text(f"#!/bin/sh\necho {name} >> {marker}\n")
        hook.chmod(0o755)
    write(root, {"README.md": "changed\n"})
    repo = Repo(str(root))
    try:
        repo.get_worktree().stage(["README.md"])
        sha = commit_staged(repo, "second\n", AUTHOR)
    finally:
        repo.close()
    assert git("rev-parse", "HEAD", cwd=root).strip() == sha
    assert git("show", "HEAD:README.md", cwd=root) == "changed\n"
    assert not marker.exists()
