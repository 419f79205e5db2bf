"""A person and the shaper's proposals (DESIGN 11): `show` an issue with its pending
proposal, `accept` it (`hive issue accept-shape N`, or the label `hive:shape-ok` on
GitHub), and `apply`, the one way a proposal becomes the issue's boundary and
criteria: the sections it adds to the body (`hive.rules.shaping.shaped_body`), written
through `hive issue edit`'s verb, and first to GitHub's issue when it came from there
(so the next sync reads the same sections)."""

from __future__ import annotations

from collections.abc import Callable

from hive.rules.shaping import ACCEPT_LABEL, Proposal, shaped_body
from hive.services import changes
from hive.services.standing import NotNow, unknown
from hive.store import issues as issue_rows
from hive.store import shapes
from hive.store.db import Db
from hive.store.issues import Issue
from hive.store.people import IssueChange

# GitHub's issue body, edited before the store's (None: a local issue)
EditRemote = Callable[[int, str], None]


class NothingToAccept(NotNow):
    """The issue has no pending proposal."""


def apply(db: Db, issue: Issue, proposal: Proposal, edit_remote: EditRemote | None = None) -> None:
    """Make `proposal` the issue's boundary and criteria (its body says so)."""
    body = shaped_body(issue.body, proposal)
    if edit_remote is not None:
        edit_remote(issue.number, body)
    change = IssueChange(
        body=body, boundary=list(proposal.boundary), criteria=list(proposal.criteria)
    )
    changes.edit(db, issue.number, change)


def accept(db: Db, number: int, by: str, edit_remote: EditRemote | None = None) -> str:
    """Apply the pending proposal of issue `number`; the sentence that says so."""
    issue = issue_rows.get(db, number)
    if issue is None:
        raise unknown(number)
    shape = shapes.get(db, number)
    if shape is None or shape.state != shapes.PENDING:
        said = f" ({shape.state}: {shape.note})" if shape is not None else ""
        raise NothingToAccept(f"#{number} has no proposal of the shaper to accept{said}")
    proposal = Proposal(shape.boundary, shape.criteria)
    apply(db, issue, proposal, edit_remote)
    note = f"the shaper's proposal was accepted by {by}: {describe(proposal)}"
    shapes.put(
        db,
        shapes.Shape(number, shapes.APPLIED, shape.boundary, shape.criteria, shape.problem, note),
    )
    return f"#{number}: {note}"


def describe(proposal: Proposal) -> str:
    """One line: the proposal's boundary and criteria."""
    paths = ", ".join(proposal.boundary)
    said = "; ".join(proposal.criteria)
    return f"boundary {paths}; criteria: {said}"


def show(db: Db, number: int) -> str:
    """The issue as a person reads it, with the shaper's word on it."""
    issue = issue_rows.get(db, number)
    if issue is None:
        raise unknown(number)
    lines = [f"#{issue.number} {issue.title} ({issue.state})"]
    if issue.labels:
        lines.append("labels: " + ", ".join(issue.labels))
    lines.append("boundary: " + (", ".join(issue.boundary) or "(none)"))
    lines.append("criteria:" if issue.criteria else "criteria: (none)")
    lines += [f"  {n}. {text}" for n, text in enumerate(issue.criteria, start=1)]
    if issue.body.strip():
        lines += ["", issue.body.rstrip()]
    shape = shapes.get(db, number)
    if shape is not None and shape.state == shapes.PENDING:
        lines += ["", f"The shaper proposes (for: {shape.problem}):", "  boundary:"]
        lines += [f"    {path}" for path in shape.boundary]
        lines.append("  criteria:")
        lines += [f"    {n}. {text}" for n, text in enumerate(shape.criteria, start=1)]
        lines.append(
            f"Accept it with `hive issue accept-shape {number}` (on GitHub: the label "
            f"`{ACCEPT_LABEL}`), or edit the issue."
        )
    elif shape is not None:
        lines += ["", f"shaper ({shape.state}): {shape.note}"]
    return "\n".join(lines)
