"""`hive.git.textmerge`: changes to separate lines combine; overlapping or touching
different changes are a conflict."""

from __future__ import annotations

from hive.git.textmerge import is_text, merge_text

BASE = b"".join(b"line %d\n" % n for n in range(1, 11))


def edit(text: bytes, n: int, new: bytes) -> bytes:
    lines = text.splitlines(keepends=True)
    lines[n - 1] = new
    return b"".join(lines)


def test_edits_of_separate_lines_both_land() -> None:
    ours = edit(BASE, 2, b"two\n")
    theirs = edit(BASE, 8, b"eight\n")
    assert merge_text(BASE, ours, theirs) == edit(edit(BASE, 2, b"two\n"), 8, b"eight\n")


def test_an_insertion_and_a_deletion_far_apart_both_land() -> None:
    ours = BASE.replace(b"line 3\n", b"line 3\nnew\n")
    theirs = BASE.replace(b"line 9\n", b"")
    merged = merge_text(BASE, ours, theirs)
    assert merged == BASE.replace(b"line 3\n", b"line 3\nnew\n").replace(b"line 9\n", b"")


def test_different_edits_of_one_line_conflict() -> None:
    assert merge_text(BASE, edit(BASE, 5, b"five\n"), edit(BASE, 5, b"FIVE\n")) is None


def test_edits_of_adjacent_lines_conflict() -> None:
    assert merge_text(BASE, edit(BASE, 5, b"five\n"), edit(BASE, 6, b"six\n")) is None


def test_two_insertions_at_one_place_conflict() -> None:
    ours = BASE.replace(b"line 4\n", b"line 4\nours\n")
    theirs = BASE.replace(b"line 4\n", b"line 4\ntheirs\n")
    assert merge_text(BASE, ours, theirs) is None


def test_the_same_edit_on_both_sides_lands_once() -> None:
    both = edit(edit(BASE, 5, b"five\n"), 6, b"six\n")
    theirs = edit(both, 9, b"nine\n")
    assert merge_text(BASE, both, theirs) == theirs


def test_one_side_unchanged_takes_the_other() -> None:
    changed = edit(BASE, 1, b"one\n")
    assert merge_text(BASE, BASE, changed) == changed
    assert merge_text(BASE, changed, BASE) == changed


def test_line_endings_and_a_missing_last_newline_are_kept() -> None:
    base = b"a\r\nb\r\nc\r\nd\r\ne"
    ours = base.replace(b"a\r\n", b"A\r\n")
    theirs = base.replace(b"\r\ne", b"\r\nE")
    assert merge_text(base, ours, theirs) == b"A\r\nb\r\nc\r\nd\r\nE"


def test_a_nul_byte_early_makes_a_file_binary() -> None:
    assert is_text(b"plain\n" * 2000)
    assert not is_text(b"x" * 7999 + b"\0")
    assert is_text(b"x" * 8000 + b"\0")
