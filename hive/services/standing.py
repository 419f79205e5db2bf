"""Where an issue's work stands, in words for a person: the name of its order's state and
the sentence a refusal starts with ("#3 is accepted and waits at the merge gate").

Every verb that refuses by state says it with `refusal(...)`, so a person reads the same
sentence from `hive approve`, `hive reject` and the API.
"""

from __future__ import annotations

from hive.rules.issue_states import IssueState
from hive.rules.states import (
    ACCEPT,
    EMPTY,
    ENDED,
    ESCALATE,
    NONE,
    REAPED,
    REFUSED,
    RELEASED,
    RUNNING,
    SENDBACK,
    STALE,
    WAIT,
    State,
)
from hive.services.errors import Conflict, NotFound
from hive.store.people import Facts

CLOSED_BY_HAND = "closed by hand"


class UnknownIssue(NotFound):
    """No issue has that number."""


class NotNow(Conflict):
    """The issue is known, but where its work stands does not allow the verb; the message
    names where it stands."""


def state_name(state: int | None) -> str | None:
    """The state's name (`accept`, `running`...); None for no order; `illegal` for a row
    no writer of the hive makes."""
    if state is None:
        return None
    try:
        return State(state).name.lower()
    except ValueError:
        return "illegal"


def unknown(issue: int) -> UnknownIssue:
    return UnknownIssue(f"no issue #{issue}")


def standing(f: Facts) -> str:
    """One clause: where the issue's work stands (`#3 is accepted and waits at the merge
    gate`)."""
    n, state = f"#{f.number}", f.order_state
    if state is None or state == NONE:
        return f"{n} has no order yet"
    attempt = f"attempt {f.attempt}"
    if state == RUNNING:
        if f.queued_at is not None and f.claimed_by is None:
            return f"{n} is queued for a runner ({attempt})"
        return f"{n} is running ({attempt})"
    if state == ENDED:
        return f"{n}'s finished work waits for review ({attempt})"
    if state == WAIT:
        return f"{n}'s review is not over yet: the reviewer asked to look again ({attempt})"
    if state == ACCEPT:
        if f.merged_sha is not None:
            return f"{n} is merged already as {f.merged_sha}"
        if f.approved_at is not None:
            return f"{n} is accepted and was approved by {f.approved_by}"
        return f"{n} is accepted and waits at the merge gate"
    if state == SENDBACK:
        return f"{n} was sent back: its next attempt comes after {attempt}"
    if state == ESCALATE:
        return f"{n} is escalated"
    if state == EMPTY:
        return f"{n}'s {attempt} left no work to judge"
    if state == STALE:
        return f"{n}'s criteria changed after {attempt} was judged: it is dispatched again"
    if state == REAPED:
        return f"{n}'s {attempt} ended {f.outcome}: it is dispatched again"
    if state in (REFUSED, RELEASED):
        return f"{n}'s {attempt} ended ({f.outcome}) with nothing to judge"
    return f"{n}'s order is in a state no writer of the hive makes (review {f.review_state!r})"


def escalated_hint(issue: int) -> str:
    return (
        "a person decides: edit its criteria or reject it with a note "
        f"(hive issue edit {issue} --criterion ..., hive reject {issue} --note ...)"
    )


def refusal(f: Facts, verb: str, hint: str | None = None) -> NotNow:
    """`#N <stands>: cannot <verb>[; <hint>]`; an escalated issue's hint says what a person
    may do. An issue closed by hand says so first (a merged one says it is merged)."""
    if f.issue_state == IssueState.CLOSED and f.merged_sha is None:
        why = f" ({f.closed_reason})" if f.closed_reason else ""
        return NotNow(
            f"#{f.number} is closed{why}: cannot {verb}; reopen it first "
            f"(hive issue reopen {f.number})"
        )
    if hint is None and f.order_state == ESCALATE:
        hint = escalated_hint(f.number)
    return NotNow(f"{standing(f)}: cannot {verb}" + (f"; {hint}" if hint else ""))
