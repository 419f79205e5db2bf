"""An issue's branch, `queen-<issue>`, named in one place: the Queen's clone, a bee's
worktree, the bundle, the export and the forge's pull request all use it."""

from __future__ import annotations

import re

BRANCH_PREFIX = "queen-"
_BRANCH = re.compile(rf"{BRANCH_PREFIX}([1-9][0-9]{{0,9}})")


def branch_name(issue: int) -> str:
    """The branch of `issue`'s work."""
    return f"{BRANCH_PREFIX}{issue}"


def branch_issue(branch: str | None) -> int | None:
    """The issue of a `queen-<n>` branch, else None."""
    match = _BRANCH.fullmatch(branch or "")
    return int(match.group(1)) if match else None
