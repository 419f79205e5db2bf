"""Issues: a new issue checked once for both faces, added with the next free number, and
listed.

Only `title` is required. Each problem names its field (`labels[2]: ...`) so a client can
fix its request without reading the server's code. The shape rule (RULES 6) still judges
whether an issue is work; this only refuses what can never be right.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import psycopg

from hive.rules.credits import ACCOUNT_ALLOWED, account_problem
from hive.rules.intake import (
    BODY_MAX_CHARS,
    BOUNDARY_PATHS_MAX,
    CRITERIA_MAX,
    LABELS_MAX,
    collapsed,
    count_problem,
    path_length_problem,
    twins,
)
from hive.rules.shape import PathFault, plain_path
from hive.rules.text import LINE_BREAKS, first_control, named
from hive.services.errors import BadRequest
from hive.store import issues
from hive.store.db import Db
from hive.store.issues import NewIssue as NewIssue  # a face names an issue by it

TITLE_MAX_CHARS = 200
LABEL_MAX_CHARS = 64
FIELDS = ("title", "body", "labels", "boundary", "criteria", "account")
INT4_MAX = 2**31 - 1  # queen_issue.number is an int4
CREATE_ATTEMPTS = 3  # two creates may pick the same next number; the loser retries
_DIGITS = re.compile(r"[0-9]{1,10}")  # ASCII only: str.isdigit() would take "٣"


class BadIssue(BadRequest):
    """A field of a new issue is wrong; `str()` starts with the field's name."""


class BadIssueNumber(BadRequest):
    """The text given for an issue number is not one."""


def issue_number(text: str) -> int:
    """The issue number in `text`, or BadIssueNumber: a positive int4, digits only."""
    if not _DIGITS.fullmatch(text) or not 1 <= int(text) <= INT4_MAX:
        shown = text if len(text) <= 40 else text[:40] + "..."
        raise BadIssueNumber(f"issue {shown!r} is not a positive integer up to {INT4_MAX}")
    return int(text)


def add(db: Db, issue: NewIssue) -> int:
    """Check `issue`, create it with the next free number and return the number; raise
    BadIssue naming the first wrong field."""
    checked = check(issue)
    for attempt in range(1, CREATE_ATTEMPTS + 1):
        try:
            return issues.create(db, checked).number
        except psycopg.errors.UniqueViolation:
            if attempt == CREATE_ATTEMPTS:
                raise
    raise AssertionError("unreachable")


def listing(db: Db) -> list[dict[str, Any]]:
    """Every issue, by number, as a JSON-ready dict."""
    return [
        {
            "number": i.number,
            "title": i.title,
            "state": i.state,
            "labels": i.labels,
            "boundary": i.boundary,
            "criteria": i.criteria,
            "blocked_by": i.blocked_by,
            "account": i.account,
            "created_at": i.created_at.isoformat(),
        }
        for i in issues.listing(db)
    ]


def from_json(data: object) -> NewIssue:
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
            account=_account(data.get("account")),
        )
    )


def check(issue: NewIssue) -> NewIssue:
    """`issue` with its title trimmed, its body's CR LF made LF and its boundary paths
    normalised, or BadIssue naming the first wrong field. No field holds a control
    character (NUL, ESC, CR, a bidirectional override) but a body's or a criterion's line
    breaks and tabs: it would be stored, then printed to a terminal."""
    title = issue.title.strip()
    if not title:
        raise BadIssue("title: must not be empty")
    if len(title) > TITLE_MAX_CHARS or "\n" in title:
        raise BadIssue(f"title: one line of at most {TITLE_MAX_CHARS} characters")
    _no_control("title", title)
    body = issue.body.replace("\r\n", "\n")
    if len(body) > BODY_MAX_CHARS:
        raise BadIssue(f"body: at most {BODY_MAX_CHARS} characters")
    _no_control("body", body, LINE_BREAKS)
    labels = collapsed(issue.labels)
    _count("labels", labels, LABELS_MAX)
    for i, label in enumerate(labels):
        if not label.strip() or len(label) > LABEL_MAX_CHARS:
            raise BadIssue(
                f"labels[{i}]: a non-empty label of at most {LABEL_MAX_CHARS} characters"
            )
        _no_control(f"labels[{i}]", label)
    _count("boundary", collapsed(issue.boundary), BOUNDARY_PATHS_MAX)  # before the work
    boundary = []
    for i, path in enumerate(issue.boundary):
        plain = plain_path(path)
        if isinstance(plain, PathFault):
            raise BadIssue(f"boundary[{i}]: {path!r} {plain.value}")
        _no_control(f"boundary[{i}]", path)
        too_long = path_length_problem(plain)
        if too_long is not None:
            raise BadIssue(f"boundary[{i}]: {plain[:60]!r} {too_long}")
        boundary.append(plain)
    paths = collapsed(boundary)
    _count("boundary", paths, BOUNDARY_PATHS_MAX)
    twin = twins(paths)
    if twin is not None:
        raise BadIssue(
            f"boundary: {twin[0]!r} and {twin[1]!r} name one file on macOS and Windows"
            " (the same name in another Unicode form or case): keep one"
        )
    for i, criterion in enumerate(issue.criteria):
        if not isinstance(criterion, str) or not criterion.strip():
            raise BadIssue(f"criteria[{i}]: must not be empty")
    criteria = collapsed(issue.criteria)
    _count("criteria", criteria, CRITERIA_MAX)
    for i, criterion in enumerate(criteria):
        _no_control(f"criteria[{i}]", criterion, LINE_BREAKS)
    if issue.account is not None and account_problem(issue.account) is not None:
        raise BadIssue(f"account: {issue.account!r} is not {ACCOUNT_ALLOWED}")
    return replace(issue, title=title, body=body, labels=labels, boundary=paths, criteria=criteria)


def _count(name: str, items: tuple[str, ...], most: int) -> None:
    problem = count_problem(name, len(items), most)
    if problem is not None:
        raise BadIssue(problem)


def _account(value: object) -> str | None:
    """The `account` of a JSON body: a string naming the payer, or null for the default."""
    if value is None:
        return None
    return _string("account", value)


def _no_control(name: str, text: str, allowed: frozenset[str] = frozenset()) -> None:
    bad = first_control(text, allowed)
    if bad is not None:
        raise BadIssue(
            f"{name}: holds {named(bad)} (no control character, bidirectional control "
            "or lone surrogate)"
        )


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
