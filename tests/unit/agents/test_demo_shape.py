"""The demo shaper: a boundary and criteria from the demo agent's lines, with no model."""

from pathlib import Path

from hive.agents.demo_shape import propose


def test_paths_inside_the_tree_and_their_texts_become_the_proposal(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("a\n")
    brief = "\n".join(
        [
            "append `docs/a.md`: one",
            "write `docs/new.md`: two",
            "after a send-back: append `docs/a.md`: three",
            "append `top.md`: ",  # a new file at the root, no text: no criterion
            "append `../out.md`: escapes",
            "append `/etc/passwd`: absolute",
            "append `.git/config`: git",
            "append `nowhere/x.md`: no directory",
            "append `docs/a.md`: has `a backtick`",
            "not an action",
        ]
        + [f"append `docs/a.md`: line {n}" for n in range(6)]
    )
    boundary, criteria = propose(brief, tmp_path)
    assert boundary == ["docs/a.md", "docs/new.md", "top.md"]
    assert criteria == [
        "file `docs/a.md` contains `one`",
        "file `docs/new.md` contains `two`",
        "file `docs/a.md` contains `three`",
        "file `docs/a.md` contains `line 0`",
        "file `docs/a.md` contains `line 1`",
    ]
