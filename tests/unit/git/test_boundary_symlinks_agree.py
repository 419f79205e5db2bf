"""A boundary through a symlink inside the repository is judged the same way by the Queen
(the shape rule, from what she read at base) and by the bee (its check on the real
worktree): before, the Queen dispatched `inner/app.py` through a symlinked directory and
the bee refused to write it, so the work could never land (issue 25, item 8)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hive.git.safety import disk_problem
from hive.rules.shape import path_problem

FILES = frozenset({"src/app.py", "README.md", "lib/y"})
DIRS = frozenset({"src", "lib"})
LINKS = {"inner": "src", "lib/x.py": "y", "here": ".", "out": "../outside", "up": "src/.."}


@pytest.fixture
def worktree(tmp_path: Path) -> Path:
    root = tmp_path / "wt"
    for name in FILES:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("x\n")
    (tmp_path / "outside").mkdir()
    for link, target in LINKS.items():
        os.symlink(target, root / link)
    return root


@pytest.mark.parametrize(
    "path",
    [
        "src/app.py",
        "README.md",
        "inner/app.py",  # through a symlinked directory inside
        "here/src/app.py",  # through a link to the root
        "up/README.md",
        "out/x.py",  # through a link out
        "lib/x.py",  # a link to a file: the last part may be one
    ],
)
def test_the_queen_and_the_bee_judge_a_path_through_a_symlink_alike(
    worktree: Path, path: str
) -> None:
    queen_ok = path_problem(path, path, FILES, DIRS, LINKS) is None
    bee_ok = disk_problem(worktree, path) is None
    assert queen_ok == bee_ok, (
        path_problem(path, path, FILES, DIRS, LINKS),
        disk_problem(worktree, path),
    )
