from __future__ import annotations

import os
from pathlib import Path

from dulwich.repo import Repo

from hive.git.facts import base_facts
from hive.git.repo import refresh_base
from hive.rules.shape import shape_problem

from .conftest import Git


def test_base_facts_feed_the_shape_rule(
    clone: Repo, upstream: Path, tmp_path: Path, git: Git
) -> None:
    os.symlink("/etc", upstream / "etc-link")
    os.symlink("src", upstream / "code")
    git("add", ".", cwd=upstream)
    git("commit", "-qm", "links", cwd=upstream)
    refresh_base(clone, str(upstream), "main")

    facts = base_facts(clone, "main")

    assert facts.files == {"README.md", "src/app.py", "src/util.py", "docs/guide.md"}
    assert facts.dirs == {"src", "docs"}
    assert facts.symlinks == {"etc-link": "/etc", "code": "src"}

    def judge(paths: list[str]) -> str | None:
        return shape_problem([], paths, "", facts.files, facts.dirs, facts.symlinks)

    # a path through a link inside the repository is named by its real path, as the bee
    # (which will not write through a link) would see it
    assert judge(["src/app.py", "src/util.py"]) is None
    through = str(judge(["src/app.py", "code/util.py"]))
    assert "passes through the symlink 'code'" in through and "'src/util.py'" in through
    assert "symlink out of the repository" in str(judge(["etc-link/passwd"]))
