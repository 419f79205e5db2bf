"""The demo shaper: proposes an issue's boundary and criteria with no model and no key.

It runs as `python -m hive.agents.demo_shape` through the command adapter, in a scratch
tree of the base, and reads the shaping brief (HIVE_BRIEF_FILE, written by
`hive.rules.shaping.shaper_brief`). Each line of the demo agent's form

    write `PATH`: TEXT        or        append `PATH`: TEXT

names a path for the boundary (a file of the base, or a new file in a directory of
the base) and, when TEXT is not empty, the criterion ``file `PATH` contains `TEXT` ``
(the demo reviewer's form; at most five). It prints one `HIVE-SHAPE-BOUNDARY:` line per
path and one `HIVE-SHAPE-CRITERION:` line per criterion, and exits 0; a path outside the
tree is left out (the shape rule would refuse it).
"""

from __future__ import annotations

import os
import posixpath
import re
import sys
from pathlib import Path

from hive.rules.shaping import BOUNDARY_MARK, CRITERIA_MAX, CRITERION_MARK

ACTION = re.compile(r"^\s*(?:after a send-back:\s*)?(?:write|append)\s+`([^`]+)`:\s?(.*)$")


def propose(brief: str, tree: Path) -> tuple[list[str], list[str]]:
    """(boundary, criteria) from the brief's action lines, against the tree at `tree`."""
    boundary: list[str] = []
    criteria: list[str] = []
    for line in brief.splitlines():
        match = ACTION.match(line)
        if match is None:
            continue
        path, text = match.group(1).strip(), match.group(2).strip()
        clean = posixpath.normpath(path)
        parts = clean.split("/")
        if path.startswith("/") or ".." in parts or ".git" in parts:
            continue
        parent = posixpath.dirname(clean)
        if not ((tree / clean).is_file() or not parent or (tree / parent).is_dir()):
            continue
        if clean not in boundary:
            boundary.append(clean)
        criterion = f"file `{clean}` contains `{text}`"
        if text and "`" not in text and criterion not in criteria:
            criteria.append(criterion)
    return boundary, criteria[:CRITERIA_MAX]


def main() -> int:
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]
    brief_file = os.environ.get("HIVE_BRIEF_FILE")
    brief = Path(brief_file).read_text(encoding="utf-8") if brief_file else sys.stdin.read()
    boundary, criteria = propose(brief, Path.cwd())
    for path in boundary:
        print(f"{BOUNDARY_MARK} {path}")
    for text in criteria:
        print(f"{CRITERION_MARK} {text}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
