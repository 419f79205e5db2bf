"""An issue's state and, once closed, why: the codes the store keeps and the hive decides on.

`queen_issue.state` is `open` or `closed`. `closed_code` says why it closed; the
`closed_reason` beside it is the sentence for people ("merged as <sha>"), never read back.
"""

from __future__ import annotations

from enum import StrEnum


class IssueState(StrEnum):
    """`queen_issue.state`."""

    OPEN = "open"
    CLOSED = "closed"


class ClosedCode(StrEnum):
    """`queen_issue.closed_code` (the store's `hive.closed_code` holds the same values)."""

    MERGED = "merged"  # its work landed on the base
    BY_HAND = "by_hand"  # a person (or its GitHub issue) closed it
    OTHER = "other"  # a reason written before the code
