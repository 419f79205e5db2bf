"""`hive.git.linediff`: its hunks turn the old lines into the new ones, no longer than
difflib's, and a comparison past its bound is given up with TooDifferent."""

from __future__ import annotations

from difflib import SequenceMatcher
from itertools import pairwise

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hive.git.linediff import TooDifferent, changed_lines

LINES = st.lists(st.sampled_from([b"a\n", b"b\n", b"c\n", b"\n"]), max_size=25)


def applied(
    old: list[bytes], new: list[bytes], hunks: list[tuple[int, int, int, int]]
) -> list[bytes]:
    out: list[bytes] = []
    cursor = 0
    for i1, i2, j1, j2 in hunks:
        assert i1 >= cursor
        out += old[cursor:i1] + new[j1:j2]
        cursor = i2
    return out + old[cursor:]


@given(LINES, LINES)
def test_the_hunks_rebuild_the_new_lines_and_are_minimal(
    old: list[bytes], new: list[bytes]
) -> None:
    hunks = changed_lines(old, new)
    assert applied(old, new, hunks) == new
    for earlier, later in pairwise(hunks):
        assert later[0] > earlier[1] and later[2] > earlier[3]  # an equal line between
    edited = sum((i2 - i1) + (j2 - j1) for i1, i2, j1, j2 in hunks)
    opcodes = SequenceMatcher(None, old, new, autojunk=False).get_opcodes()
    assert edited <= sum((i2 - i1) + (j2 - j1) for t, i1, i2, j1, j2 in opcodes if t != "equal")


def test_a_comparison_past_its_bound_is_given_up() -> None:
    old = [b"%d\n" % n for n in range(3000)]
    new = [b"x%d\n" % n for n in range(3000)]
    with pytest.raises(TooDifferent, match="over 1000 steps to compare 3000 lines with 3000"):
        changed_lines(old, new, work_max=1000)
    with pytest.raises(TooDifferent):
        changed_lines(old, new)  # 6,000 edits: past the default bound too
    assert changed_lines(old[:300], new[:300]) == [(0, 300, 0, 300)]
