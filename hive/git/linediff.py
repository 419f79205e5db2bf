"""The lines one text changed against another, found within a bounded amount of work.

Myers' algorithm (the one git's diff uses by default) after the common leading and
trailing lines are set aside: its work grows with the sizes times the number of lines
changed, so a few edits of a long file cost little, and a file rewritten through is
given up once DIFF_WORK_MAX steps are spent (a second or two; some 1,400 lines changed
on one side), with TooDifferent.
difflib's SequenceMatcher, used before, took minutes on a 1 MiB file of repeated lines.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence

DIFF_WORK_MAX = 1_000_000

Hunk = tuple[int, int, int, int]  # old lines [i1, i2) became new lines [j1, j2)


class TooDifferent(Exception):
    """The two texts differ in more lines than DIFF_WORK_MAX steps can sort out."""


def changed_lines(
    old: Sequence[bytes], new: Sequence[bytes], work_max: int = DIFF_WORK_MAX
) -> list[Hunk]:
    """The hunks turning `old` into `new`, in order (none touching another), each a
    run of old lines replaced by a run of new lines (either may be empty)."""
    n, m = len(old), len(new)
    head = 0
    while head < n and head < m and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < n - head and tail < m - head and old[n - 1 - tail] == new[m - 1 - tail]:
        tail += 1
    a, b = old[head : n - tail], new[head : m - tail]
    return [
        (i1 + head, i2 + head, j1 + head, j2 + head) for i1, i2, j1, j2 in _myers(a, b, work_max)
    ]


def _myers(a: Sequence[bytes], b: Sequence[bytes], work_max: int) -> list[Hunk]:
    n, m = len(a), len(b)
    if not n or not m:
        return [(0, n, 0, m)] if n or m else []
    # rounds[d][(k + d) // 2]: how far along `a` diagonal k (x - y) reaches with d edits
    rounds: list[array[int]] = []
    work = 0
    for d in range(n + m + 1):
        here = array("q", bytes(8 * (d + 1)))
        before = rounds[-1] if rounds else None
        for i, k in enumerate(range(-d, d + 1, 2)):
            if before is None:
                x = 0
            elif k == -d or (k != d and before[(k + d) // 2 - 1] < before[(k + d) // 2]):
                x = before[(k + d) // 2]  # down: a line of `b` inserted
            else:
                x = before[(k + d) // 2 - 1] + 1  # right: a line of `a` deleted
            y = x - k
            start = x
            while x < n and y < m and a[x] == b[y]:
                x += 1
                y += 1
            work += x - start + 1
            here[i] = x
            if x >= n and y >= m:
                rounds.append(here)
                return _hunks(rounds, n, m)
        rounds.append(here)
        if work > work_max:
            raise TooDifferent(f"over {work_max} steps to compare {n} lines with {m}")
    raise AssertionError("unreachable: n + m edits always suffice")


def _hunks(rounds: list[array[int]], n: int, m: int) -> list[Hunk]:
    """The edit path walked back from (n, m), then runs of edits joined into hunks."""
    edits: list[tuple[bool, int, int]] = []  # (inserted?, x, y) before the edit
    x, y = n, m
    for d in range(len(rounds) - 1, 0, -1):
        k = x - y
        before = rounds[d - 1]
        down = k == -d or (k != d and before[(k + d) // 2 - 1] < before[(k + d) // 2])
        prev_k = k + 1 if down else k - 1
        prev_x = before[(prev_k + d - 1) // 2]
        prev_y = prev_x - prev_k
        edits.append((down, prev_x, prev_y))
        x, y = prev_x, prev_y
    hunks: list[list[int]] = []
    for down, ex, ey in reversed(edits):
        to_x, to_y = (ex, ey + 1) if down else (ex + 1, ey)
        if hunks and hunks[-1][1] == ex and hunks[-1][3] == ey:
            hunks[-1][1], hunks[-1][3] = to_x, to_y
        else:
            hunks.append([ex, to_x, ey, to_y])
    return [(h[0], h[1], h[2], h[3]) for h in hunks]
