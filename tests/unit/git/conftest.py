"""Test repositories built with the git binary, and the git binary as the judge.

Every helper runs /usr/bin/git with no system or global config and a fixed identity, so
a developer's own git setup (hooks path, signing, aliases) cannot change a result.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from dulwich.repo import Repo

GIT = "/usr/bin/git"
IDENTITY = {
    "GIT_AUTHOR_NAME": "Ada",
    "GIT_AUTHOR_EMAIL": "ada@example.com",
    "GIT_COMMITTER_NAME": "Ada",
    "GIT_COMMITTER_EMAIL": "ada@example.com",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
}


def git_env(home: Path) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "LANG": "C",
        **IDENTITY,
    }


Git = Callable[..., str]


@pytest.fixture
def git(tmp_path: Path) -> Git:
    """`git(*args, cwd=path)`: run the git binary, return stdout, fail loudly on error."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)

    def run(*args: str, cwd: Path, input: bytes | None = None, check: bool = True) -> str:
        done = subprocess.run(
            [GIT, "-c", "init.defaultBranch=main", *args],
            cwd=cwd,
            env=git_env(home),
            input=input,
            capture_output=True,
            timeout=60,
        )
        if check and done.returncode != 0:
            raise AssertionError(f"git {' '.join(args)} failed: {done.stderr.decode()}")
        return done.stdout.decode() + (done.stderr.decode() if not check else "")

    return run


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


@pytest.fixture
def upstream(tmp_path: Path, git: Git) -> Path:
    """A repository with branch main: three commits over a few files in two directories."""
    root = tmp_path / "upstream"
    root.mkdir()
    git("init", "-q", cwd=root)
    write(root, {"README.md": "hello\n", "src/app.py": "print(1)\n", "src/util.py": "x = 1\n"})
    git("add", ".", cwd=root)
    git("commit", "-qm", "first", cwd=root)
    write(root, {"docs/guide.md": "guide\n" * 20})
    git("add", ".", cwd=root)
    git("commit", "-qm", "second", cwd=root)
    write(root, {"src/app.py": "print(2)\n" * 30})
    git("commit", "-qam", "third", cwd=root)
    return root


@pytest.fixture
def clone(tmp_path: Path, upstream: Path) -> Iterator[Repo]:
    """The hive's checkout of `upstream` under tmp_path/work (bare, base fetched)."""
    from hive.git.repo import open_checkout

    checkout = open_checkout(str(upstream), tmp_path / "work", "main")
    yield checkout.repo
    checkout.repo.close()


def head_of(git: Git, repo: Path, ref: str) -> str:
    return git("rev-parse", ref, cwd=repo).strip()
