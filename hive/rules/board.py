"""The board (DESIGN 10): which column an issue's card stands in, and how a reconnecting
event stream catches up.

Columns, left to right: backlog (open, waiting for its next attempt), blocked (an open
blocker), running (an order in flight, queued or claimed), review (finished work being
judged, accepted work at the merge gate, or escalated to a person), done (merged) and
dropped (closed without a merge). An order in flight is running even when a blocker was
added after it started; merged work is done even before its issue's close lands.
"""

from __future__ import annotations

from enum import StrEnum

from hive.rules.states import ACCEPT, ENDED, ESCALATE, RUNNING, WAIT


class Column(StrEnum):
    BACKLOG = "backlog"
    BLOCKED = "blocked"
    RUNNING = "running"
    REVIEW = "review"
    DONE = "done"
    DROPPED = "dropped"


COLUMNS = tuple(Column)  # left to right
# the states whose work waits on a reviewer, the merge gate or a person
_IN_REVIEW = frozenset({ENDED, WAIT, ACCEPT, ESCALATE})


def column_of(
    *, issue_open: bool, order_state: int | None, merged: bool, open_blockers: int
) -> Column:
    """The column of an issue: open or not, its order's state (None: no order), whether
    its work is merged, and how many of its blockers are still open."""
    if not issue_open:
        return Column.DONE if merged else Column.DROPPED
    if order_state == RUNNING:
        return Column.RUNNING
    if merged:
        return Column.DONE
    if order_state in _IN_REVIEW:
        return Column.REVIEW
    if open_blockers > 0:
        return Column.BLOCKED
    return Column.BACKLOG


# ---- catching up after a reconnect ------------------------------------------------------

SNAPSHOT = -1  # catch_up's answer: send the whole board, the events are gone


def catch_up(last_seen: int | None, oldest_kept: int, newest: int) -> int:
    """Where a stream that saw event `last_seen` resumes: the first event to replay
    (newest + 1 when it missed nothing), or SNAPSHOT when it saw none of this epoch's
    events, or the ones after it are no longer kept (`oldest_kept` is the first event
    still held; newest + 1 when none is), or it names an event not sent yet."""
    if last_seen is None or last_seen > newest or last_seen + 1 < oldest_kept:
        return SNAPSHOT
    return last_seen + 1


# ---- what a person may do from a card (DESIGN 11) ---------------------------------------


class Action(StrEnum):
    """What a person may do to an issue: POST /api/issues/<n>/<action>, a card's button."""

    APPROVE = "approve"
    REJECT = "reject"
    CANCEL = "cancel"
    CLOSE = "close"
    REOPEN = "reopen"


APPROVE, REJECT, CANCEL, CLOSE, REOPEN = tuple(Action)
ACTIONS = tuple(Action)
_ACTIONS = {
    Column.BACKLOG: (CLOSE,),
    Column.BLOCKED: (CLOSE,),
    Column.RUNNING: (CANCEL, CLOSE),
    Column.REVIEW: (APPROVE, REJECT, CLOSE),
    Column.DONE: (),
    Column.DROPPED: (REOPEN,),
}


def actions_of(column: Column) -> tuple[Action, ...]:
    """The buttons a card in `column` offers: what the hive may allow from there (the
    action itself still answers where the issue stands, a 409 included). Merged work
    offers none; closed without a merge, reopen only."""
    return _ACTIONS[column]
