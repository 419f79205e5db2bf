"""`queen_shape`: the shaper's proposal for each issue it shaped (DESIGN 11), with the
floor of a shaping turn that could not run."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from psycopg.types.json import Jsonb

from hive.store.db import Db, dicts, one, one_dict

PENDING, APPLIED, REFUSED, FAILED, WAITING = "pending", "applied", "refused", "failed", "waiting"


@dataclass(frozen=True)
class Shape:
    """One issue's shaping: `state` (PENDING, APPLIED, REFUSED, FAILED, or WAITING for
    its next try after a failure), the proposal, the problem it answered, the sentence,
    and the failures in a row with the pause before the next try."""

    issue: int
    state: str
    boundary: tuple[str, ...] = ()
    criteria: tuple[str, ...] = ()
    problem: str = ""
    note: str = ""
    failures: int = 0
    pause_seconds: int = 0
    retry_at: datetime | None = None
    updated_at: datetime | None = field(default=None, compare=False)


def _shape(row: dict) -> Shape:  # type: ignore[type-arg]
    return Shape(
        issue=row["issue"],
        state=row["state"],
        boundary=tuple(row["boundary"] or ()),
        criteria=tuple(row["criteria"] or ()),
        problem=row["problem"],
        note=row["note"],
        failures=row["failures"],
        pause_seconds=row["pause_seconds"],
        retry_at=row["retry_at"],
        updated_at=row["updated_at"],
    )


def get(db: Db, issue: int) -> Shape | None:
    row = one_dict(db, "shape_of", {"issue": issue})
    return None if row is None else _shape(row)


def of_open_issues(db: Db) -> dict[int, Shape]:
    return {row["issue"]: _shape(row) for row in dicts(db, "shapes_of_open")}


def put(db: Db, shape: Shape) -> None:
    """Write `shape` as the issue's (its retry is `pause_seconds` from now)."""
    one(
        db,
        "put_shape",
        {
            "issue": shape.issue,
            "state": shape.state,
            "boundary": list(shape.boundary),
            "criteria": Jsonb(list(shape.criteria)),
            "problem": shape.problem,
            "note": shape.note,
            "failures": shape.failures,
            "pause_seconds": shape.pause_seconds,
        },
    )
