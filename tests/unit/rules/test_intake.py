"""rules/intake: the bounds an issue meets at the door (issue 25, item 8)."""

from __future__ import annotations

import unicodedata

import pytest

from hive.rules.intake import (
    NAME_MAX_BYTES,
    PATH_MAX_BYTES,
    collapsed,
    count_problem,
    path_length_problem,
    twin_key,
    twins,
)


def test_duplicates_collapse_in_their_first_order() -> None:
    assert collapsed(["b", "a", "b", "c", "a"]) == ("b", "a", "c")


def test_a_count_past_its_bound_is_named_with_the_bound() -> None:
    assert count_problem("labels", 100, 100) is None
    assert count_problem("boundary", 7000, 100) == (
        "boundary: 7000 items, at most 100 (duplicates count once)"
    )


def test_a_path_within_name_max_and_path_max_is_fine() -> None:
    name = "n" * NAME_MAX_BYTES
    assert path_length_problem(f"src/{name}") is None
    assert path_length_problem("/".join([name] * 12)) is None  # 3071 bytes


def test_a_name_past_name_max_bytes_is_too_long_even_in_few_characters() -> None:
    assert path_length_problem("src/" + "é" * 128) == (
        "has a name of 256 bytes (éééééééééééééééééééé...), at most 255"
    )


def test_a_path_past_its_bound_is_too_long() -> None:
    path = "/".join(["d" * 200] * 16)
    assert path_length_problem(path) == f"is {len(path)} bytes long, at most {PATH_MAX_BYTES}"


def test_nfc_and_nfd_twins_are_found() -> None:
    nfc, nfd = unicodedata.normalize("NFC", "café.py"), unicodedata.normalize("NFD", "café.py")
    assert nfc != nfd and twin_key(nfc) == twin_key(nfd)
    assert twins([f"src/{nfc}", f"src/{nfd}"]) == (f"src/{nfc}", f"src/{nfd}")


@pytest.mark.parametrize(
    ("paths", "found"),
    [
        (["README.md", "readme.md"], ("README.md", "readme.md")),
        (["Src/a.py", "src/b.py"], ("Src", "src")),  # a directory in two cases
        (["src/a.py", "src/b.py", "src/a.py"], None),  # the same path is no twin
        (["src/straße.py", "src/STRASSE.py"], ("src/straße.py", "src/STRASSE.py")),
        (["a", "b"], None),
    ],
)
def test_case_twins_are_found_also_among_directories(
    paths: list[str], found: tuple[str, str] | None
) -> None:
    assert twins(paths) == found
