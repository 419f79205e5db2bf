"""The shaper (DESIGN 11): an issue that fails the shape gate gets a proposal of its
boundary and criteria, read here from the shaper's lines and checked by the same shape
rule as any boundary.

A shaper prints

    HIVE-SHAPE-BOUNDARY: <path>
    HIVE-SHAPE-CRITERION: <text>

one line per path (1 to 12) and per criterion (1 to 5). The proposal is held to
`hive.rules.shape.shape_problem` against the base, with the section it adds to the
body (`shaped_body`) so a new file it names is cited; a proposal that fails says why.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from hive.rules.intake import BODY_MAX_CHARS
from hive.rules.shape import shape_problem
from hive.rules.text import first_control, named, shown

BOUNDARY_MARK = "HIVE-SHAPE-BOUNDARY:"
CRITERION_MARK = "HIVE-SHAPE-CRITERION:"
CRITERIA_MAX = 5
CRITERION_MAX_CHARS = 500
SHAPED_NOTE = "_Boundary and criteria proposed by the hive's shaper._"
# HIVE_SHAPE: `ask` shows a proposal to its author, `apply` applies it at once
ASK, APPLY = "ask", "apply"
SHAPE_MODES = (ASK, APPLY)
ACCEPT_LABEL = "hive:shape-ok"


@dataclass(frozen=True)
class Proposal:
    """A shaper's proposal: the boundary's paths and the criteria, in the order said."""

    boundary: tuple[str, ...]
    criteria: tuple[str, ...]


NO_CRITERIA = "no criteria: say when the work is done"


def gate_problem(shape_problem: str | None, criteria: int, never_task: bool) -> str | None:
    """Why an open issue goes to the shaper (the shape gate's reason, or no criteria),
    or None: it is work, or it is never a task (a label says so)."""
    if never_task:
        return None
    if shape_problem is not None:
        return shape_problem
    return NO_CRITERIA if criteria == 0 else None


def proposal_of(lines: Iterable[str]) -> Proposal:
    """The proposal in a shaper's lines (any other line is passed over); a path or a
    criterion said twice counts once, blank ones not at all."""
    boundary: list[str] = []
    criteria: list[str] = []
    for raw in lines:
        line = raw.strip()
        upper = line.upper()
        if upper.startswith(BOUNDARY_MARK):
            path = line[len(BOUNDARY_MARK) :].strip()
            if path and path not in boundary:
                boundary.append(path)
        elif upper.startswith(CRITERION_MARK):
            text = " ".join(line[len(CRITERION_MARK) :].split())[:CRITERION_MAX_CHARS]
            if text and text not in criteria:
                criteria.append(text)
    return Proposal(tuple(boundary), tuple(criteria))


def shaped_body(body: str, proposal: Proposal) -> str:
    """The issue's body with the `## Boundary` and `## Criteria` sections of the proposal
    (the sections a GitHub issue's body is read by, `hive.rules.forge_body.body_sections`)."""
    lines = [body.rstrip(), "", SHAPED_NOTE, "", "## Boundary", ""]
    lines += [f"- `{path}`" for path in proposal.boundary]
    lines += ["", "## Criteria", ""]
    lines += [f"- {text}" for text in proposal.criteria]
    return "\n".join(lines).lstrip("\n") + "\n"


def proposal_problem(
    proposal: Proposal,
    labels: Iterable[str],
    body: str,
    files: frozenset[str],
    dirs: frozenset[str],
    symlinks: Mapping[str, str],
) -> str | None:
    """Why a proposal cannot be applied (the shape rule's reason, no or too many
    criteria, a control character, a shaped body past the intake's bound), or None. What
    a shaper prints is an agent's output: nothing of it is applied unchecked."""
    if not proposal.boundary:
        return "the shaper proposed no boundary"
    if not proposal.criteria:
        return "the shaper proposed no criteria"
    if len(proposal.criteria) > CRITERIA_MAX:
        return f"the shaper proposed {len(proposal.criteria)} criteria; at most {CRITERIA_MAX}"
    for said in (*proposal.boundary, *proposal.criteria):
        control = first_control(said)
        if control is not None:
            return f"the shaper's line {shown(said)} holds the control character {named(control)}"
    shaped = shaped_body(body, proposal)
    if len(shaped) > BODY_MAX_CHARS:
        return f"the shaped body would be over the {BODY_MAX_CHARS} characters an issue holds"
    return shape_problem(labels, proposal.boundary, shaped, files, dirs, symlinks)


def shaper_brief(title: str, body: str, problem: str, files: Iterable[str]) -> str:
    """What a shaper reads: the issue, why it is not work yet, the base's files (a few
    hundred at most) and the lines to print."""
    listed = sorted(files)
    shown = listed[:300]
    lines = [f"Shape this issue so it can become work: {title}", ""]
    if body.strip():
        lines += [body.rstrip(), ""]
    lines += [f"It is not work yet: {problem}.", "", "The repository's files at base:"]
    lines += [f"  {path}" for path in shown]
    if len(listed) > len(shown):
        lines.append(f"  ... and {len(listed) - len(shown)} more")
    lines += [
        "",
        "Propose the files the work may change (ones that exist, or new files in",
        "directories that exist) and one to five criteria a reviewer can judge. Your",
        "final message must hold one line each:",
        f"  {BOUNDARY_MARK} <path>",
        f"  {CRITERION_MARK} <text>",
    ]
    return "\n".join(lines) + "\n"
