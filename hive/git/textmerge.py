"""A line-level three-way merge of one text file, for `merge`: the changes each side made
to the common ancestor are combined when they touch separate lines; anything else is a
conflict (the caller names the path; no conflict markers are ever written).

Each side's changes are the hunks `linediff` finds against the base (bounded: a side
changed in too many lines raises TooDifferent). Hunks of the two
sides that overlap or touch (no unchanged base line between them) form one cluster; a
cluster is clean when only one side changed it, or when both sides made it read the
same. This is stricter than git (which can split a touching pair) and never looser.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from hive.git.linediff import TooDifferent, changed_lines

__all__ = ["BINARY_PROBE_BYTES", "TooDifferent", "is_text", "merge_text"]

# git's own test for a binary file: a NUL byte in the first 8000 bytes
BINARY_PROBE_BYTES = 8000


@dataclass(frozen=True)
class _Hunk:
    """Base lines [start, end) replaced by `lines`, by side 0 (ours) or 1 (theirs)."""

    start: int
    end: int
    lines: tuple[bytes, ...]
    side: int


def is_text(data: bytes) -> bool:
    """Whether `data` is merged line by line: no NUL byte in its first 8000 bytes."""
    return b"\0" not in data[:BINARY_PROBE_BYTES]


def merge_text(base: bytes, ours: bytes, theirs: bytes) -> bytes | None:
    """The three-way merge of `ours` and `theirs` against `base`, or None on a conflict
    (changes that overlap or touch and differ). Line endings are kept as they are.
    Raises TooDifferent when a side changed too many lines to compare in bounded time."""
    if ours == theirs or theirs == base:
        return ours
    if ours == base:
        return theirs
    base_lines = base.splitlines(keepends=True)
    ours_lines = ours.splitlines(keepends=True)
    theirs_lines = theirs.splitlines(keepends=True)
    hunks = sorted(
        _hunks(base_lines, ours_lines, 0) + _hunks(base_lines, theirs_lines, 1),
        key=lambda h: (h.start, h.end, h.side),
    )
    out: list[bytes] = []
    cursor = 0
    for cluster in _clusters(hunks):
        start = cluster[0].start
        end = max(h.end for h in cluster)
        out.extend(base_lines[cursor:start])
        merged = _resolve(base_lines, cluster, start, end)
        if merged is None:
            return None
        out.extend(merged)
        cursor = end
    out.extend(base_lines[cursor:])
    return b"".join(out)


def _hunks(base: Sequence[bytes], side: Sequence[bytes], which: int) -> list[_Hunk]:
    return [
        _Hunk(i1, i2, tuple(side[j1:j2]), which) for i1, i2, j1, j2 in changed_lines(base, side)
    ]


def _clusters(hunks: list[_Hunk]) -> list[list[_Hunk]]:
    """Hunks sorted by start, grouped while each starts at or before the group's end
    (so touching hunks, and two insertions at one place, share a group)."""
    groups: list[list[_Hunk]] = []
    end = -1
    for hunk in hunks:
        if groups and hunk.start <= end:
            groups[-1].append(hunk)
            end = max(end, hunk.end)
        else:
            groups.append([hunk])
            end = hunk.end
    return groups


def _resolve(
    base: Sequence[bytes], cluster: list[_Hunk], start: int, end: int
) -> list[bytes] | None:
    """What base lines [start, end) become: each side's hunks applied to them; the
    same text from both sides, or a change from one side only; else None."""
    versions: list[list[bytes] | None] = []
    for side in (0, 1):
        mine = [h for h in cluster if h.side == side]
        if not mine:
            versions.append(None)
            continue
        lines: list[bytes] = []
        cursor = start
        for hunk in mine:
            lines.extend(base[cursor : hunk.start])
            lines.extend(hunk.lines)
            cursor = hunk.end
        lines.extend(base[cursor:end])
        versions.append(lines)
    ours, theirs = versions
    if ours is None:
        return theirs
    if theirs is None or ours == theirs:
        return ours
    return None
