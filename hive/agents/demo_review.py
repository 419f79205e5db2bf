"""The demo reviewer: judges an issue's criteria with no model and no key.

It runs as `python -m hive.agents.demo_review` through the command adapter, in a scratch
worktree of the branch's head, and reads the review brief (HIVE_BRIEF_FILE, written by
`hive.agents.review.review_brief`). Each numbered criterion of the form

    file `PATH` contains `TEXT`

is judged against the worktree: met when the file exists inside the worktree (no `..`,
no `.git`, no symlink out) and its text contains TEXT. It prints one line per criterion
it judged (`HIVE-CRITERION: <n> met` or `HIVE-CRITERION: <n> unmet: <why>`); a criterion
of any other form is not judged (the verdict then waits for a person or a real reviewer),
and it says so on a line of its own. Exit 0.
"""

from __future__ import annotations

import os
import posixpath
import re
import sys
from pathlib import Path

from hive.agents.review import criteria_from_brief

CONTAINS = re.compile(r"^file\s+`([^`]+)`\s+contains\s+`([^`]*)`\s*$")


def judge(criterion: str, worktree: Path) -> tuple[bool, str] | None:
    """(met, why) for a criterion of the demo's form, None for any other form."""
    match = CONTAINS.match(criterion.strip())
    if match is None:
        return None
    path, text = match.groups()
    clean = posixpath.normpath(path)
    if path.startswith("/") or ".." in clean.split("/") or ".git" in clean.split("/"):
        return False, f"{path} is not a path inside the repository"
    root = os.path.realpath(worktree)
    target = os.path.join(root, clean)
    if os.path.realpath(target) != target:
        return False, f"{path} goes through a symlink"
    try:
        content = Path(target).read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return False, f"{path} does not exist"
    except OSError as err:
        return False, f"{path} cannot be read: {err.strerror}"
    if text in content:
        return True, ""
    return False, f"{path} does not contain `{text}`"


def run(brief: str, worktree: Path) -> int:
    for number, criterion in enumerate(criteria_from_brief(brief), start=1):
        verdict = judge(criterion, worktree)
        if verdict is None:
            print(
                f"demo reviewer: criterion {number} is not of the form file `PATH` contains `TEXT`"
            )
        elif verdict[0]:
            print(f"HIVE-CRITERION: {number} met")
        else:
            print(f"HIVE-CRITERION: {number} unmet: {verdict[1]}")
    return 0


def main() -> int:
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]
    brief_file = os.environ.get("HIVE_BRIEF_FILE")
    brief = Path(brief_file).read_text(encoding="utf-8") if brief_file else sys.stdin.read()
    return run(brief, Path.cwd())


if __name__ == "__main__":
    sys.exit(main())
