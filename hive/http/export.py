"""Taking work out without a push credential: the bundle of `base..queen-<issue>`.

One lookup serves `GET /queen/export/<issue>` and `hive export ISSUE`: this process's
checkout first (the branch is here: the freshest work), else the bundle a runner stored
in `queen_bundle`. Each refusal is an error with the HTTP status it maps to and the exit
code the command line returns.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from hive.errors import HiveError

INT4_MAX = 2**31 - 1  # queen_issue.number is an int4
_DIGITS = re.compile(r"[0-9]{1,10}")  # ASCII only: str.isdigit() would take "٣"


class ExportError(HiveError):
    """Why no bundle is served; `status` is the HTTP answer."""

    status = 500


class BadIssueNumber(ExportError):
    status = 400
    exit_code = 2


class NothingKnown(ExportError):
    status = 404
    exit_code = 3


class NoWorkBeyondBase(ExportError):
    status = 409
    exit_code = 4


def parse_issue(text: str) -> int:
    """The issue number in `text`, or BadIssueNumber: a positive int4, digits only."""
    if not _DIGITS.fullmatch(text) or not 1 <= int(text) <= INT4_MAX:
        shown = text if len(text) <= 40 else text[:40] + "..."
        raise BadIssueNumber(f"issue {shown!r} is not a positive integer up to {INT4_MAX}")
    return int(text)


def bundle_name(issue: int) -> str:
    return f"queen-{issue}.bundle"


@dataclass(frozen=True)
class BundleRef:
    """A bundle that can be served: its head is known before its bytes are read, so a
    conditional request (If-None-Match) costs no bundle write."""

    issue: int
    head_sha: str
    source: str  # "checkout" or "table"
    read: Callable[[], bytes]


class ExportSource(Protocol):
    def branches(self) -> list[dict[str, Any]]:
        """Every `queen-*` branch with commits beyond base, as JSON-ready dicts."""
        ...

    def find(self, issue: int) -> BundleRef:
        """The issue's bundle; NothingKnown or NoWorkBeyondBase when there is none."""
        ...
