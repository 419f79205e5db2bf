"""Where the `claude` adapter restores a session: the folder Claude Code 2.1.332 itself
uses for a worktree (its vectors read from the real CLI's config directory)."""

from __future__ import annotations

from pathlib import Path

from hive.agents.claude import path_hash, project_dir

CONFIG = Path("/c")
LONG = "/tmp/cx11/" + "a" * 120 + "/" + "b" * 120


def test_a_short_path_is_its_characters_with_every_other_one_a_dash() -> None:
    assert project_dir(CONFIG, Path("/w/queen-11")) == CONFIG / "projects" / "-w-queen-11"


def test_a_long_path_is_cut_at_200_characters_and_followed_by_its_hash() -> None:
    # the real CLI ran in LONG made the folder `-tmp-cx11-aaa...-bbb...-2n1jh8`
    name = project_dir(CONFIG, Path(LONG)).name
    assert path_hash(LONG) == "2n1jh8"
    assert len(name) == 200 + len("-2n1jh8") and name.endswith("b-2n1jh8")
    assert name.startswith("-tmp-cx11-aaa")


def test_the_hash_takes_utf16_units_and_wraps_at_32_bits() -> None:
    assert path_hash("") == "0"
    assert path_hash("a") == "2p"  # 97
    assert path_hash("é") == "6h"  # 233: one UTF-16 unit
    assert path_hash("😀") == "11zz7"  # two units: 55357 * 31 + 56832
