"""DESIGN 11: the shaper's lines, its proposal held to the shape rule, the body it
writes, and which issues go to it."""

from hive.rules.forge_body import body_sections
from hive.rules.intake import BODY_MAX_CHARS
from hive.rules.shaping import (
    CRITERIA_MAX,
    NO_CRITERIA,
    Proposal,
    gate_problem,
    proposal_of,
    proposal_problem,
    shaped_body,
    shaper_brief,
)

FILES = frozenset({"README.md", "docs/a.md"})
DIRS = frozenset({"docs"})


def test_the_gate_sends_an_issue_without_a_boundary_or_criteria_and_never_an_epic() -> None:
    assert gate_problem("no boundary: name 1 to 12 files", 1, False) == (
        "no boundary: name 1 to 12 files"
    )
    assert gate_problem(None, 0, False) == NO_CRITERIA
    assert gate_problem(None, 2, False) is None  # work already
    assert gate_problem("labelled 'epic'", 0, True) is None


def test_the_lines_make_the_proposal_in_order_once_each() -> None:
    lines = [
        "thinking...",
        "HIVE-SHAPE-BOUNDARY: docs/a.md",
        "  hive-shape-boundary:  docs/b.md ",
        "HIVE-SHAPE-BOUNDARY: docs/a.md",
        "HIVE-SHAPE-BOUNDARY:",
        "HIVE-SHAPE-CRITERION: file `docs/a.md`   contains `x`",
        "HIVE-SHAPE-CRITERION: file `docs/a.md` contains `x`",
        "HIVE-SHAPE-CRITERION:   ",
    ]
    assert proposal_of(lines) == Proposal(
        ("docs/a.md", "docs/b.md"), ("file `docs/a.md` contains `x`",)
    )


def test_the_shaped_body_carries_sections_the_forge_reads() -> None:
    proposal = Proposal(("docs/b.md",), ("c1", "c2"))
    body = shaped_body("Please.\n", proposal)
    assert body.startswith("Please.\n\n_Boundary and criteria proposed")
    assert body_sections(body).boundary == ("docs/b.md",)
    assert body_sections(body).criteria == ("c1", "c2")
    assert shaped_body("", proposal).startswith("_Boundary")


def test_a_proposal_is_held_to_the_shape_rule() -> None:
    def problem(boundary: tuple[str, ...], criteria: tuple[str, ...]) -> str | None:
        return proposal_problem(Proposal(boundary, criteria), (), "", FILES, DIRS, {})

    assert problem(("docs/a.md",), ("c",)) is None
    assert problem(("docs/new.md",), ("c",)) is None  # a new file in a directory that exists
    assert problem((), ("c",)) == "the shaper proposed no boundary"
    assert problem(("docs/a.md",), ()) == "the shaper proposed no criteria"
    many = tuple(f"c{n}" for n in range(CRITERIA_MAX + 1))
    assert problem(("docs/a.md",), many) == "the shaper proposed 6 criteria; at most 5"
    assert problem(("../x",), ("c",)) == "boundary path '../x' climbs out with '..'"
    assert problem(("nowhere/x.md",), ("c",)) == (
        "boundary path 'nowhere/x.md' names no file at base and its directory does not exist"
    )


def test_a_hostile_shaper_s_lines_are_refused_before_anything_is_applied() -> None:
    """What a shaper prints is an agent's output: a control character (a terminal's
    escape, a NUL the store refuses) or a body past the intake's bound is refused here,
    never half-applied (GitHub's body rewritten, then the store refusing it)."""

    def problem(boundary: tuple[str, ...], criteria: tuple[str, ...], body: str = "") -> str:
        return str(proposal_problem(Proposal(boundary, criteria), (), body, FILES, DIRS, {}))

    escape = problem(("docs/a.md",), ("file `docs/a.md` contains `x`\x1b[2J",))
    assert "holds the control character U+001B" in escape and "\\x1b" in escape
    assert "U+0000" in problem(("docs/a\x00.md",), ("c",))
    assert "60000 characters" in problem(("docs/a.md",), ("c",), "b" * BODY_MAX_CHARS)


def test_the_brief_names_the_problem_the_files_and_the_lines_to_print() -> None:
    files = [f"f{n:04}.md" for n in range(305)]
    brief = shaper_brief("T", "the body", "no boundary", files)
    assert brief.startswith("Shape this issue so it can become work: T\n\nthe body\n")
    assert "It is not work yet: no boundary." in brief
    assert "  f0299.md" in brief and "f0300.md" not in brief and "... and 5 more" in brief
    assert "HIVE-SHAPE-BOUNDARY: <path>" in brief and "HIVE-SHAPE-CRITERION: <text>" in brief
    # a blank body adds no paragraph: the problem follows the title
    assert shaper_brief("T", "  ", "p", []).startswith(
        "Shape this issue so it can become work: T\n\nIt is not work yet: p."
    )
