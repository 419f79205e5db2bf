"""A Queen round's plan (DESIGN 5.1): which issues go now, on which key, and why the rest
do not. Pure: the actor gathers the facts (the clock included), asks `plan_round`, writes
the planned orders in turn, and renders skips and refusals into sentences only for its
report (`render`).

An issue's order state decides whether it may go again (priority's SKIP_BY_STATE): a
send-back goes again (its next attempt continues the branch, with the review's notes in
its brief); stale, reaped, refused and released work goes again; work running, waiting
for review, accepted, escalated or empty does not. Accepted work is not news every round;
escalated work is named as needing a person; empty work waits for its floor.

The plan takes the priority card's order and skips, leaves out an issue still backing off
after failed attempts (the retry card) and one whose boundary overlaps an order planned
earlier in the same round, then plans orders up to the capacity, each on the key the keys
card chooses. It assumes each planned write lands: an order that is not written leaves its
key and files unused until the next round, and a lease gone stops the writing there (the
actor's part).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum, auto

from hive.rules.credits import may_order, no_credit_sentence
from hive.rules.holds import HeldOrder, overlapping
from hive.rules.keys import all_busy_sentence, choose_key
from hive.rules.outcome_codes import OutcomeCode
from hive.rules.priority import Candidate, Skip, Skipped, capacity, order_candidates
from hive.rules.retry import failures_after, may_redispatch, waiting_sentence
from hive.rules.spend import capped_sentence, spend_stops
from hive.rules.states import EMPTY_FLOOR_SECONDS


@dataclass(frozen=True)
class Limits:
    """The Queen's own bounds: HIVE_MAX_WORKERS, lanes per key, the memory one bee
    needs (0: not checked), and whether bees run elsewhere (no room check here)."""

    max_workers: int
    lanes_per_key: int = 1
    bee_memory_mb: int = 0
    elsewhere: bool = False


@dataclass(frozen=True)
class LastEnd:
    """An issue's last attempt that ended: the failures in a row before it, its outcome
    code, how long ago it ended, and its outcome sentence (for people)."""

    failures_before: int
    code: OutcomeCode | None
    since_seconds: float
    outcome: str | None = None


@dataclass(frozen=True)
class RoundFacts:
    """What a round knows: the issues that are tasks (as candidates) and the reason of
    each that is not, the orders' holds, last endings and load, the keys, and this
    process's room for bees."""

    limits: Limits
    candidates: tuple[Candidate, ...] = ()
    not_tasks: tuple[tuple[int, str], ...] = ()
    running_critical: int = 0
    held: tuple[HeldOrder, ...] = ()
    last_ends: Mapping[int, LastEnd] = field(default_factory=dict)
    in_flight: int = 0
    keys: tuple[int, ...] = ()  # every key's index
    busy: Mapping[int, int] = field(default_factory=dict)  # lanes taken, by key
    resting: Mapping[int, int] = field(default_factory=dict)  # seconds left, by key
    last_key: int | None = None
    host_ready: bool = True  # bees may start in this process now
    free_memory_mb: int | None = None  # None: not measured
    spent_today_usd: float = 0.0  # what attempts that ended since 00:00 UTC cost
    spend_cap_usd: float = 0.0  # HIVE_SPEND_CAP_USD (0: no cap)
    # credits on: each candidate's paying account, and each such account's balance
    payers: Mapping[int, str] = field(default_factory=dict)
    balances: Mapping[str, int] = field(default_factory=dict)


# --- what the plan says -----------------------------------------------------------------


@dataclass(frozen=True)
class BackingOff:
    """Skipped: its last attempts failed and its back-off has not passed."""

    number: int
    failures: int
    since_seconds: float
    last: str


@dataclass(frozen=True)
class NotATask:
    """Skipped: the issue is not a task (the shape card's reason)."""

    number: int
    problem: str


@dataclass(frozen=True)
class NoCredit:
    """Skipped: its account holds no token (credits on); running turns finish."""

    number: int
    account: str
    balance: int


RoundSkip = Skipped | BackingOff | NotATask | NoCredit


class Stop(Enum):
    """A refusal that names nothing but itself."""

    HOST_NOT_READY = auto()  # no bee pool here, or draining
    LEASE_GONE = auto()  # another Queen took the lease, or it ran out


@dataclass(frozen=True)
class KeysResting:
    """No key with a free lane: these rest after a provider refused a turn."""

    resting: tuple[tuple[int, int], ...]  # (key, seconds left), by key


@dataclass(frozen=True)
class KeysBusy:
    """No key with a free lane: every lane of these keys is busy (none: no key is set)."""

    keys: tuple[int, ...]
    lanes_per_key: int


@dataclass(frozen=True)
class WorkersFull:
    in_flight: int
    max_workers: int


@dataclass(frozen=True)
class NoMemory:
    bee_memory_mb: int


@dataclass(frozen=True)
class SpendCapped:
    """The day's spend reached HIVE_SPEND_CAP_USD: no new order until 00:00 UTC."""

    spent_usd: float
    cap_usd: float


@dataclass(frozen=True)
class NotStarted:
    """A planned order the write did not start, in the writer's own words."""

    number: int
    detail: str


Refusal = Stop | KeysResting | KeysBusy | WorkersFull | NoMemory | SpendCapped | NotStarted


@dataclass(frozen=True)
class Planned:
    number: int
    key: int


@dataclass(frozen=True)
class Plan:
    """The orders to write, in order; the skips the report names (a live order, finished
    work that waits for review and accepted work at the gate are an order's normal
    course, not news); why the plan stops short, if it does; and whether a person must
    act."""

    orders: tuple[Planned, ...] = ()
    skipped: tuple[RoundSkip, ...] = ()
    refusal: Refusal | None = None
    needs_you: bool = False


_QUIET = frozenset({Skip.LIVE_ORDER, Skip.AWAITING_REVIEW, Skip.ACCEPTED})
# the skips a person must act on (the others pass on their own)
_NEEDS_YOU = frozenset({Skip.ESCALATED, Skip.UNKNOWN_STATE})


# --- the plan ---------------------------------------------------------------------------


def plan_round(facts: RoundFacts) -> Plan:
    """The round's orders, skips and refusal from `facts`."""
    lim = facts.limits
    ranked, skipped = order_candidates(facts.candidates, facts.held, facts.running_critical)
    boundaries = {c.number: c.boundary for c in facts.candidates}
    waiting = backing_off(facts.last_ends)
    indexes = [k for k in facts.keys if k not in facts.resting]
    busy = Counter({k: facts.busy.get(k, 0) for k in indexes})
    free_lanes = sum(max(0, lim.lanes_per_key - busy[k]) for k in indexes)
    limit = capacity(lim.max_workers - facts.in_flight, free_lanes, room_for_bees(facts))
    last_key = facts.last_key
    planned: list[Planned] = []
    later: list[RoundSkip] = []
    taken: set[str] = set()  # what this round's own orders hold from here on
    refusal: Refusal | None = None
    capped = spend_stops(facts.spent_today_usd, facts.spend_cap_usd)
    for one in ranked:
        boundary = boundaries[one.number]
        if one.number in waiting:
            later.append(waiting[one.number])
            continue
        account = facts.payers.get(one.number)
        if account is not None and not may_order(facts.balances.get(account, 0)):
            later.append(NoCredit(one.number, account, facts.balances.get(account, 0)))
            continue
        clash = overlapping(boundary, taken)
        if clash:
            later.append(Skipped(one.number, Skip.HELD, clash))
            continue
        if capped:  # running bees finish; nothing new starts
            refusal = SpendCapped(facts.spent_today_usd, facts.spend_cap_usd)
            break
        key = choose_key(indexes, busy, lim.lanes_per_key, last_key)
        if len(planned) >= limit or key is None:  # no key is free only once full
            refusal = _why_full(facts, len(planned), free_lanes, indexes)
            break
        planned.append(Planned(one.number, key))
        taken.update(boundary)
        busy[key] += 1
        last_key = key
    news = [s for s in [*skipped, *later] if not (isinstance(s, Skipped) and s.why in _QUIET)]
    not_tasks = [NotATask(n, problem) for n, problem in facts.not_tasks]
    return Plan(
        tuple(planned),
        (*not_tasks, *news),
        refusal,
        # a person must act on an issue that is not a task, on escalated work, on a hive
        # with no key, on a spend cap that stops work (raise it, or wait for the day's
        # end), or on an account with no credit (a grant); busy keys, holds and
        # blockers pass on their own
        needs_you=bool(not_tasks)
        or not facts.keys
        or isinstance(refusal, SpendCapped)
        or any(isinstance(s, NoCredit) for s in later)
        or any(s.why in _NEEDS_YOU for s in skipped),
    )


def backing_off(last_ends: Mapping[int, LastEnd]) -> dict[int, BackingOff]:
    """The issues whose last attempt failed and whose back-off has not passed yet."""
    waiting: dict[int, BackingOff] = {}
    for number, end in last_ends.items():
        failures = failures_after(end.failures_before, end.code)
        if not may_redispatch(failures, end.since_seconds):
            waiting[number] = BackingOff(number, failures, end.since_seconds, end.outcome or "")
    return waiting


def room_for_bees(facts: RoundFacts) -> int | None:
    """How many more bees this process can take (None: no bound here, as when they run
    elsewhere or the free memory is not measured)."""
    lim = facts.limits
    if lim.elsewhere:
        return None
    if not facts.host_ready:
        return 0
    if facts.free_memory_mb is None or not lim.bee_memory_mb:
        return None
    return facts.free_memory_mb // lim.bee_memory_mb


def _no_key(facts: RoundFacts, indexes: list[int]) -> Refusal:
    """No key has a free lane: some rest after a refusal, or all are busy."""
    if facts.resting:
        return KeysResting(tuple(sorted(facts.resting.items())))
    return KeysBusy(tuple(indexes), facts.limits.lanes_per_key)


def _why_full(facts: RoundFacts, taken: int, free_lanes: int, indexes: list[int]) -> Refusal:
    """Which bound the round met once `taken` orders are planned."""
    lim = facts.limits
    if free_lanes - taken <= 0:
        return _no_key(facts, indexes)
    if facts.in_flight + taken >= lim.max_workers:
        return WorkersFull(facts.in_flight + taken, lim.max_workers)
    if not facts.host_ready:  # here only: elsewhere, the room was no bound
        return Stop.HOST_NOT_READY
    return NoMemory(lim.bee_memory_mb)


# --- the report's sentences -------------------------------------------------------------

_SKIPS = {
    Skip.OPEN_BLOCKER: "skipped: an open blocker",
    Skip.LIVE_ORDER: "skipped: it already has a live order",
    Skip.ACCEPTED: "skipped: already accepted",
    Skip.AWAITING_REVIEW: "skipped: its finished work waits for review",
    Skip.NO_BOUNDARY: "skipped: no boundary",
    Skip.HELD: "skipped: its boundary overlaps files another order holds: ",
    Skip.EMPTY: "skipped: its last attempt committed nothing; it goes again once"
    f" {EMPTY_FLOOR_SECONDS // 60} min have passed since its review",
    Skip.UNKNOWN_STATE: "skipped: its order's review_state is none the hive knows;"
    " a person looks at the row",
}
_STOPS = {
    Stop.HOST_NOT_READY: "no bee can start in this process now (no bee pool, or draining)",
    Stop.LEASE_GONE: "the Queen lease is gone (another Queen took it, or it ran out): the"
    " order was not written and this round dispatches nothing more",
}


def render(item: RoundSkip | Refusal) -> str:
    """The sentence a person reads in the round's report for a skip or a refusal."""
    match item:
        case Skipped(number=number, why=Skip.ESCALATED, note=note):
            said = note or "the review escalated it"
            return (
                f"needs a person: {said}; hive approve {number} / hive reject {number} --note ..."
            )
        case Skipped(why=why, paths=paths):
            return _SKIPS[why] + ", ".join(paths)
        case BackingOff(failures=failures, since_seconds=since, last=last):
            return waiting_sentence(failures, since, last)
        case NotATask(problem=problem):
            return problem
        case NoCredit(account=account, balance=balance):
            return no_credit_sentence(account, balance)
        case Stop():
            return _STOPS[item]
        case KeysResting(resting=resting):
            parts = ", ".join(f"key {k} for {s} s" for k, s in resting)
            return f"every free key rests after its provider refused a turn: {parts}"
        case KeysBusy(keys=keys, lanes_per_key=lanes):
            return all_busy_sentence(keys, lanes)
        case WorkersFull(in_flight=n, max_workers=most):
            return f"{n} orders in flight: HIVE_MAX_WORKERS={most} reached"
        case NoMemory(bee_memory_mb=mb):
            return f"not enough free memory here for another bee (HIVE_BEE_MEMORY_MB={mb})"
        case SpendCapped(spent_usd=spent, cap_usd=cap):
            return capped_sentence(spent, cap)
        case NotStarted(number=number, detail=detail):  # pragma: no branch (the last kind)
            return f"#{number} not started: {detail}"
