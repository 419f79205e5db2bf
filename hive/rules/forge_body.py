"""An issue body's sections as the GitHub forge reads them (DESIGN 10): its boundary
and its criteria, under their headings. Pure."""

from __future__ import annotations

import re
from dataclasses import dataclass

BOUNDARY_HEADINGS = frozenset({"boundary", "files"})
CRITERIA_HEADINGS = frozenset({"criteria", "acceptance criteria", "done when"})
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$")
_ITEM = re.compile(r"^\s{0,3}(?:[-*+]|[0-9]{1,3}[.)])\s+(?:\[[ xX]\]\s+)?(.*\S)\s*$")


@dataclass(frozen=True)
class BodySections:
    """A body's boundary paths and criteria, each in the order written."""

    boundary: tuple[str, ...]
    criteria: tuple[str, ...]


def body_sections(body: str | None) -> BodySections:
    """The list items under a `## Boundary` (or `## Files`) heading and under a
    `## Criteria` (`## Acceptance criteria`, `## Done when`) heading, any heading level,
    any case. A boundary item in backticks loses them; a criterion is kept as written
    (the demo reviewer reads its backticks). Items under other headings are not read."""
    boundary: list[str] = []
    criteria: list[str] = []
    into: list[str] | None = None
    for line in (body or "").replace("\r\n", "\n").split("\n"):
        heading = _HEADING.match(line)
        if heading:
            name = heading.group(1).strip().rstrip(":").lower()
            into = (
                boundary
                if name in BOUNDARY_HEADINGS
                else criteria
                if name in CRITERIA_HEADINGS
                else None
            )
            continue
        item = _ITEM.match(line)
        if into is None or item is None:
            continue
        text = item.group(1)
        if into is boundary:
            text = text.strip("`").strip()
        if text and text not in into:
            into.append(text)
    return BodySections(tuple(boundary), tuple(criteria))
