"""A new issue as the API and `hive issue add` receive it, checked once for both.

Only `title` is required. Each problem names its field (`labels[2]: ...`) so a client can
fix its request without reading the server's code. The shape rule (RULES 6) still judges
whether an issue is work; this only refuses what can never be right.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import PurePosixPath

from hive.errors import UsageError
from hive.store.issues import NewIssue

TITLE_MAX_CHARS = 200
LABEL_MAX_CHARS = 64
BODY_MAX_CHARS = 60_000
FIELDS = ("title", "body", "labels", "boundary", "criteria")


class BadIssue(UsageError):
    """A field of a new issue is wrong; `str()` starts with the field's name."""


def new_issue_from_json(data: object) -> NewIssue:
    """The issue a JSON body describes, or BadIssue naming the first wrong field."""
    if not isinstance(data, Mapping):
        raise BadIssue("body: expected a JSON object with at least a title")
    unknown = sorted(set(data) - set(FIELDS))
    if unknown:
        raise BadIssue(f"{unknown[0]}: not a field (fields are {', '.join(FIELDS)})")
    if "title" not in data:
        raise BadIssue("title: required")
    body = data.get("body", "")
    if body is None:
        body = ""
    return check(
        NewIssue(
            title=_string("title", data["title"]),
            body=_string("body", body),
            labels=_strings("labels", data.get("labels", [])),
            boundary=_strings("boundary", data.get("boundary", [])),
            criteria=_strings("criteria", data.get("criteria", [])),
        )
    )


def check(issue: NewIssue) -> NewIssue:
    """`issue` with its title trimmed, or BadIssue naming the first wrong field."""
    title = issue.title.strip()
    if not title:
        raise BadIssue("title: must not be empty")
    if len(title) > TITLE_MAX_CHARS or "\n" in title:
        raise BadIssue(f"title: one line of at most {TITLE_MAX_CHARS} characters")
    if len(issue.body) > BODY_MAX_CHARS:
        raise BadIssue(f"body: at most {BODY_MAX_CHARS} characters")
    for i, label in enumerate(issue.labels):
        if not label.strip() or len(label) > LABEL_MAX_CHARS:
            raise BadIssue(
                f"labels[{i}]: a non-empty label of at most {LABEL_MAX_CHARS} characters"
            )
    for i, path in enumerate(issue.boundary):
        problem = _path_problem(path)
        if problem:
            raise BadIssue(f"boundary[{i}]: {path!r} {problem}")
    for i, criterion in enumerate(issue.criteria):
        if not isinstance(criterion, str) or not criterion.strip():
            raise BadIssue(f"criteria[{i}]: must not be empty")
    return replace(issue, title=title)


def _path_problem(path: str) -> str | None:
    # DESIGN 7: a boundary path never escapes the repository
    if not path or "\x00" in path or "\\" in path:
        return "is not a path relative to the repository root"
    pure = PurePosixPath(path)
    if pure.is_absolute():
        return "is absolute; give a path relative to the repository root"
    if ".." in pure.parts:
        return "leaves the repository (..)"
    return None


def _string(name: str, value: object) -> str:
    if not isinstance(value, str):
        raise BadIssue(f"{name}: expected a string, got {_kind(value)}")
    return value


def _strings(name: str, value: object) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, Sequence) or isinstance(value, str):
        raise BadIssue(f"{name}: expected a list of strings, got {_kind(value)}")
    for i, item in enumerate(value):
        if not isinstance(item, str):
            raise BadIssue(f"{name}[{i}]: expected a string, got {_kind(item)}")
    return tuple(value)


def _kind(value: object) -> str:
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}
    if value is None:
        return "null"
    if isinstance(value, int | float) and not isinstance(value, bool):
        return "a number"
    return names.get(type(value), type(value).__name__)
