"""An order's state from its row (RULES 4: there is no status column), and which states
each event may move.

The row says where the order is by `started`, `finished_at`, `outcome_code` and
`review_state`; `state_of` is the one reading of them, mirrored by the store's SQL
function `hive.order_state` (a test keeps the two equal). An ending with nothing to judge
(ended badly, handed back, quota exhausted, cancelled...) is RELEASED at once: its issue
is free, and only a `finished` ending waits for review (ENDED).

`sources(event)` are the states `next_state` lets `event` leave: a statement that moves an
order lands only from one of them, so every writer is held to the table.
"""

from __future__ import annotations

from enum import StrEnum

from hive.rules.outcome_codes import REAPED_CODES, OutcomeCode
from hive.rules.states import (
    ACCEPT,
    EMPTY,
    ENDED,
    ESCALATE,
    ILLEGAL,
    NONE,
    REAPED,
    REDISPATCH,
    REFUSED,
    RELEASED,
    RUNNING,
    SENDBACK,
    STALE,
    WAIT,
    State,
    next_state,
)


class ReviewState(StrEnum):
    """`queen_dispatch.review_state`: where judged work stands."""

    WAIT = "wait"
    ACCEPT = "accept"
    SENDBACK = "sendback"
    ESCALATE = "escalate"
    EMPTY = "empty"
    STALE = "stale"
    RELEASED = "released"


_BY_REVIEW = {
    ReviewState.WAIT: WAIT,
    ReviewState.ACCEPT: ACCEPT,
    ReviewState.SENDBACK: SENDBACK,
    ReviewState.ESCALATE: ESCALATE,
    ReviewState.EMPTY: EMPTY,
    ReviewState.STALE: STALE,
    ReviewState.RELEASED: RELEASED,
}
REVIEW_STATE_OF: dict[int, ReviewState] = {state: review for review, state in _BY_REVIEW.items()}


def state_of(
    started: bool, finished: bool, code: OutcomeCode | None, review_state: str | None
) -> State:
    """The state of an order row by its outcome code (see the module docstring)."""
    if not started:
        return REFUSED if code == OutcomeCode.REFUSED else NONE
    if not finished:
        return RUNNING
    if code == OutcomeCode.REFUSED:
        return REFUSED
    if code in REAPED_CODES:
        return REAPED
    if code != OutcomeCode.FINISHED:
        return RELEASED
    if review_state is None:
        return ENDED
    try:
        return _BY_REVIEW[ReviewState(review_state)]
    except ValueError:
        return ILLEGAL  # a value no writer of ours puts there


def sources(event: int) -> tuple[State, ...]:
    """The states `event` may leave, by the table (ascending)."""
    return tuple(s for s in State if next_state(s, event) != ILLEGAL)


def may_replace(state: int) -> bool:
    """Whether a new attempt may replace an order in `state`: where the table lets the
    order be dispatched again (REDISPATCH), and after a send-back, whose verdict asked
    for exactly that attempt."""
    return state == SENDBACK or next_state(state, REDISPATCH) != ILLEGAL
