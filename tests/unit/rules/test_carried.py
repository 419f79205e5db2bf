from __future__ import annotations

import pytest

from hive.rules import carried
from hive.rules.carried import (
    EXEC_MODE,
    FILE_MODE,
    GITLINK_MODE,
    LINK_MODE,
    LINKS_OUT,
    NOT_PLAIN,
    OUTSIDE,
    change_fault,
    in_boundary,
    leads_out,
    name_fault,
    refused_sentence,
    refused_tree_decision,
)
from hive.rules.states import ESCALATE, SENDBACK, VERDICT_ESCALATE, VERDICT_SENDBACK


@pytest.mark.parametrize(
    ("name", "fault"),
    [
        ("app.py", None),
        (".gitignore", None),
        ("", "holds the name ''"),
        (".", "holds the name '.'"),
        ("..", "holds the name '..'"),
        ("a/b", "holds a name with a slash"),
        ("a\\b", "holds a name with a slash"),
        ("a\nb", "holds a control character (a NUL or a newline, say)"),
        ("a\x7fb", "holds a control character (a NUL or a newline, say)"),
        (".Git", "points into .git"),
    ],
)
def test_a_name_along_a_carried_path_is_plain(name: str, fault: str | None) -> None:
    assert name_fault(name) == fault


def test_a_boundary_entry_names_a_file_or_everything_under_a_directory() -> None:
    assert in_boundary("src/a.py", ["src"]) and in_boundary("src", ["src"])
    assert not in_boundary("srcs/a.py", ["src"])


@pytest.mark.parametrize(
    ("path", "mode", "fault"),
    [
        ("src/a.py", FILE_MODE, None),
        ("src/a.py", EXEC_MODE, None),
        ("src/a.py", None, None),  # a deletion inside
        ("src/mod", GITLINK_MODE, None),
        ("README.md", FILE_MODE, OUTSIDE),
        ("README.md", EXEC_MODE, OUTSIDE),  # a mode change outside
        ("README.md", None, OUTSIDE),
        ("src/../README.md", FILE_MODE, "climbs out with '..'"),
        ("src/.git/config", FILE_MODE, "points into .git"),
        ("src//a.py", FILE_MODE, NOT_PLAIN),
        ("src/./a.py", FILE_MODE, NOT_PLAIN),
        ("src/a.py", 0o100664, "has the file mode 100664, which git does not write"),
    ],
)
def test_a_change_is_carried_only_inside_the_boundary(
    path: str, mode: int | None, fault: str | None
) -> None:
    assert change_fault(path, mode, ["src"]) == fault


def test_a_new_symlink_is_carried_only_when_it_stays_in_the_repository() -> None:
    assert change_fault("src/l", LINK_MODE, ["src"], "a.py") is None
    assert change_fault("src/l", LINK_MODE, ["src"], "../README.md") is None
    assert change_fault("src/l", LINK_MODE, ["src"], "/etc/passwd") == LINKS_OUT
    assert change_fault("src/l", LINK_MODE, ["src"], "../../x") == LINKS_OUT
    # a chain through another link of the tree is followed
    assert change_fault("src/l", LINK_MODE, ["src"], "up/../x", {"src/up": ".."}) == LINKS_OUT
    assert change_fault("src/l", LINK_MODE, ["src"], None) is None  # empty target: its dir


def test_a_path_is_followed_one_name_at_a_time() -> None:
    assert not leads_out("a/./b//c", {})
    assert leads_out("..", {})
    assert not leads_out("a/..", {})
    assert leads_out("a/l/x", {"a/l": "/etc"})
    assert not leads_out("a/l/x", {"a/l": "../b"})
    assert leads_out("a/l", {"a/l": "m", "a/m": "l"})  # a loop


def test_refused_paths_are_named_up_to_a_cap() -> None:
    assert refused_sentence([("b", OUTSIDE), ("a", OUTSIDE), ("a", OUTSIDE)]) == (
        f"a {OUTSIDE}; b {OUTSIDE}"
    )
    many = [(f"f{n:02}", OUTSIDE) for n in range(carried.NAMED_MAX + 3)]
    assert refused_sentence(many).endswith("; and 3 more")
    assert refused_sentence([]) == ""


def test_a_refused_tree_is_sent_back_then_escalated_never_waited_on() -> None:
    sent = refused_tree_decision("README.md is outside the boundary", 0)
    assert (sent.verdict, sent.event, sent.note) == (
        SENDBACK,
        VERDICT_SENDBACK,
        "README.md is outside the boundary",
    )
    held = refused_tree_decision("x", 2)
    assert (held.verdict, held.event) == (ESCALATE, VERDICT_ESCALATE)
    assert held.note == "sent back 2 times and still refused: x"


def test_a_refused_path_is_named_with_its_control_characters_escaped() -> None:
    assert refused_sentence([("src/a\x1b[2Jb\nc", OUTSIDE)]) == f"src/a\\x1b[2Jb\\nc {OUTSIDE}"
