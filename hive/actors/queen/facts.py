"""What a Queen round reads before it asks the rules. It gathers open issues as
candidates (with their shape problems), holds, last endings and the load on each key
into the round's `RoundFacts`. It only reads. No decision is taken here beyond
translating rows into the rules' own inputs."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime

from hive.git.facts import BaseFacts
from hive.rules.criteria import SENDBACK_HEADING, carried_note
from hive.rules.floors import released_at_floor
from hive.rules.holds import (
    PH_AWAITING_REVIEW,
    PH_DONE,
    PH_ESCALATED,
    PH_RUNNING,
    PH_SENT_BACK,
    HeldOrder,
    Phase,
)
from hive.rules.lifecycle import ReviewState, state_of
from hive.rules.outcome_codes import OutcomeCode
from hive.rules.priority import CRITICAL, Candidate, label_level
from hive.rules.round import LastEnd, Limits, RoundFacts
from hive.rules.shape import shape_problem
from hive.rules.states import NONE, State
from hive.store.issues import Issue
from hive.store.orders import Order


def order_state(order: Order) -> State:
    """The order's state as its row says it (RULES 4)."""
    return state_of(
        order.started, order.finished_at is not None, order.outcome_code, order.review_state
    )


def phase_of(order: Order) -> Phase:
    """Where an order is, as holds see it. Finished work not yet judged awaits review.
    An ending that is not `finished` (handed back, reaped, refused...) holds nothing, so
    its issue may be dispatched again at once."""
    if order.finished_at is None:
        return PH_RUNNING
    if order.review_state == ReviewState.SENDBACK:
        return PH_SENT_BACK
    if order.review_state == ReviewState.ESCALATE:
        return PH_ESCALATED
    if order.outcome_code == OutcomeCode.FINISHED and order.review_state in (
        None,
        ReviewState.WAIT,
    ):
        return PH_AWAITING_REVIEW
    return PH_DONE


def held_orders(orders: Iterable[Order], now: datetime) -> list[HeldOrder]:
    held = []
    for order in orders:
        since = 0
        if order.finished_at is not None:
            since = int((now - order.finished_at).total_seconds())
        held.append(HeldOrder(order.issue, tuple(order.owned_paths), phase_of(order), since))
    return held


@dataclass(frozen=True)
class Candidates:
    """The issues that are tasks, as candidates, and the one reason of each that is not."""

    candidates: list[Candidate]
    shape_problems: list[tuple[int, str]]
    running_critical: int


def candidates_of(
    open_issues: list[Issue], orders: list[Order], base: BaseFacts, now: datetime
) -> Candidates:
    by_issue = {order.issue: order for order in orders}
    open_numbers = {issue.number for issue in open_issues}
    labels = {issue.number: issue.labels for issue in open_issues}
    found: list[Candidate] = []
    problems: list[tuple[int, str]] = []
    for issue in open_issues:
        problem = shape_problem(
            issue.labels, issue.boundary, issue.body, base.files, base.dirs, base.symlinks
        )
        if problem is not None:
            problems.append((issue.number, problem))
            continue
        order = by_issue.get(issue.number)
        found.append(
            Candidate(
                number=issue.number,
                labels=tuple(issue.labels),
                age_seconds=int((now - issue.created_at).total_seconds()),
                boundary=tuple(issue.boundary),
                open_blocker=any(b in open_numbers for b in issue.blocked_by),
                state=order_state(order) if order is not None else NONE,
                review_note=(order.review_note or "") if order is not None else "",
            )
        )
    running_critical = sum(
        1
        for order in orders
        if order.finished_at is None and label_level(labels.get(order.issue, [])) == CRITICAL
    )
    return Candidates(found, problems, running_critical)


def last_ends(orders: Iterable[Order], now: datetime) -> dict[int, LastEnd]:
    """Each issue's attempt that ended, as the retry card reads it. An order in flight is
    not here."""
    return {
        o.issue: LastEnd(
            o.failures_in_a_row,
            o.outcome_code,
            (now - o.finished_at).total_seconds(),
            o.outcome,
        )
        for o in orders
        if o.finished_at is not None
    }


def busy_keys(orders: Iterable[Order]) -> Counter[int]:
    """Lanes taken on each key. Every order in flight holds its key."""
    return Counter(o.key_index for o in orders if o.finished_at is None and o.key_index is not None)


def in_flight(orders: Iterable[Order]) -> int:
    return sum(1 for o in orders if o.finished_at is None)


def last_key(orders: Iterable[Order]) -> int | None:
    """The key of the most recent order. The circular scan starts just after it."""
    dated = [o for o in orders if o.key_index is not None]
    if not dated:
        return None
    return max(dated, key=lambda o: o.created_at).key_index


def utcnow() -> datetime:
    return datetime.now(UTC)


def round_facts(
    open_issues: list[Issue],
    orders: list[Order],
    base: BaseFacts,
    now: datetime,
    *,
    limits: Limits,
    keys: Iterable[int],
    resting: dict[int, int],
    last_key: int | None,
    host_ready: bool,
    free_memory_mb: int | None,
    spent_today_usd: float = 0.0,
    spend_cap_usd: float = 0.0,
) -> RoundFacts:
    """Everything a round decides by, from the rows read at `now`."""
    found = candidates_of(open_issues, orders, base, now)
    return RoundFacts(
        limits,
        candidates=tuple(found.candidates),
        not_tasks=tuple(found.shape_problems),
        running_critical=found.running_critical,
        held=tuple(held_orders(orders, now)),
        last_ends=last_ends(orders, now),
        in_flight=in_flight(orders),
        keys=tuple(keys),
        busy=busy_keys(orders),
        resting=resting,
        last_key=last_key,
        host_ready=host_ready,
        free_memory_mb=free_memory_mb,
        spent_today_usd=spent_today_usd,
        spend_cap_usd=spend_cap_usd,
    )


def past_floor(orders: Iterable[Order], now: datetime) -> list[tuple[Order, State]]:
    """The orders whose floor passed at `now` (EMPTY, SENDBACK, WAIT), with the state
    each was judged in."""
    due = []
    for order in orders:
        if order.finished_at is None:
            continue
        state = order_state(order)
        since_finish = (now - order.finished_at).total_seconds()
        since_review = None
        if order.reviewed_at is not None:
            since_review = (now - order.reviewed_at).total_seconds()
        if released_at_floor(state, since_finish, since_review):
            due.append((order, state))
    return due


def carried_notes(orders: Iterable[Order]) -> dict[int, str]:
    """The review notes each issue's next attempt carries in its brief (a send-back's)."""
    notes = {}
    for order in orders:
        note = carried_note(order_state(order), order.review_state, order.review_note)
        if note:
            notes[order.issue] = note
    return notes


def brief_of(issue: Issue, sendback_note: str = "") -> str:
    """The agent's whole prompt. It holds the issue, its boundary and its acceptance
    criteria. When its last attempt was sent back, the review's notes follow under
    SENDBACK_HEADING."""
    lines = [f"Issue #{issue.number}: {issue.title}", ""]
    if issue.body.strip():
        lines += [issue.body.rstrip(), ""]
    lines.append("Change only these files:")
    lines += [f"  {path}" for path in issue.boundary]
    if issue.criteria:
        lines += ["", "Done when:"]
        lines += [f"  - {c}" for c in issue.criteria]
    if sendback_note:
        lines += ["", SENDBACK_HEADING, sendback_note.rstrip()]
    return "\n".join(lines) + "\n"
