"""An order's states and events (RULES 4): there is no status column.

The state is derived from the row (`started`, `finished_at`, `outcome`, `review_state`);
this module says which event may move which state where. Every pair the table does not
list is ILLEGAL, and the caller refuses it rather than writing it.
"""

from __future__ import annotations

import re
from enum import IntEnum, StrEnum


class State(IntEnum):
    """An order's state, derived from its row; ILLEGAL answers a move the table lacks."""

    NONE = 0
    RUNNING = 1
    REFUSED = 2
    ENDED = 3
    WAIT = 4
    ACCEPT = 5
    SENDBACK = 6
    ESCALATE = 7
    EMPTY = 8
    STALE = 9
    REAPED = 10
    RELEASED = 11
    ILLEGAL = 99


class Event(IntEnum):
    """What happens to an order."""

    START = 0
    REFUSE = 1
    END = 2
    END_OTHER_TURN = 3
    REAP_STALL = 4
    REAP_BOOT = 5
    VERDICT_ACCEPT = 6
    VERDICT_SENDBACK = 7
    VERDICT_ESCALATE = 8
    VERDICT_WAIT = 9
    VERDICT_EMPTY = 10
    CRITERIA_CHANGED = 11
    CI_RED_UNDER_CEILING = 12
    CI_RED_AT_CEILING = 13
    FLOOR_PASSED = 14
    REDISPATCH = 15


NONE = State.NONE
RUNNING = State.RUNNING
REFUSED = State.REFUSED
ENDED = State.ENDED
WAIT = State.WAIT
ACCEPT = State.ACCEPT
SENDBACK = State.SENDBACK
ESCALATE = State.ESCALATE
EMPTY = State.EMPTY
STALE = State.STALE
REAPED = State.REAPED
RELEASED = State.RELEASED
STATES = State.RELEASED + 1  # the states an order can be in (ILLEGAL is none of them)
ILLEGAL = State.ILLEGAL

START = Event.START
REFUSE = Event.REFUSE
END = Event.END
END_OTHER_TURN = Event.END_OTHER_TURN
REAP_STALL = Event.REAP_STALL
REAP_BOOT = Event.REAP_BOOT
VERDICT_ACCEPT = Event.VERDICT_ACCEPT
VERDICT_SENDBACK = Event.VERDICT_SENDBACK
VERDICT_ESCALATE = Event.VERDICT_ESCALATE
VERDICT_WAIT = Event.VERDICT_WAIT
VERDICT_EMPTY = Event.VERDICT_EMPTY
CRITERIA_CHANGED = Event.CRITERIA_CHANGED
CI_RED_UNDER_CEILING = Event.CI_RED_UNDER_CEILING
CI_RED_AT_CEILING = Event.CI_RED_AT_CEILING
FLOOR_PASSED = Event.FLOOR_PASSED
REDISPATCH = Event.REDISPATCH
EVENTS = len(Event)

_VERDICTS: dict[int, State] = {
    VERDICT_ACCEPT: ACCEPT,
    VERDICT_SENDBACK: SENDBACK,
    VERDICT_ESCALATE: ESCALATE,
    VERDICT_WAIT: WAIT,
    VERDICT_EMPTY: EMPTY,
}
_JUDGED: dict[int, State] = {**_VERDICTS, CRITERIA_CHANGED: STALE, FLOOR_PASSED: RELEASED}
_PARKED: dict[int, State] = {CRITERIA_CHANGED: STALE, FLOOR_PASSED: RELEASED}
_OVER: dict[int, State] = {REDISPATCH: RUNNING}

# The whole table. END_OTHER_TURN is in no row: an older turn's ending never closes the
# current attempt.
TRANSITIONS: dict[int, dict[int, State]] = {
    NONE: {START: RUNNING, REFUSE: REFUSED},
    RUNNING: {END: ENDED, REAP_STALL: REAPED, REAP_BOOT: REAPED},
    ENDED: _JUDGED,
    WAIT: _JUDGED,
    ACCEPT: {CI_RED_UNDER_CEILING: SENDBACK, CI_RED_AT_CEILING: ESCALATE},
    SENDBACK: _PARKED,
    EMPTY: _PARKED,
    ESCALATE: {CRITERIA_CHANGED: STALE},
    STALE: _OVER,
    REAPED: _OVER,
    REFUSED: _OVER,
    RELEASED: _OVER,
}


def next_state(state: int, event: int) -> State:
    """The state after `event`, or ILLEGAL for every pair the table does not list."""
    return TRANSITIONS.get(state, {}).get(event, ILLEGAL)


# Floors: how long an order rests in a state before FLOOR_PASSED releases its issue.
EMPTY_FLOOR_SECONDS = 30 * 60
SENDBACK_FLOOR_SECONDS = 60 * 60
WAIT_FLOOR_SECONDS = 6 * 60 * 60
_FLOORS: dict[int, int] = {
    EMPTY: EMPTY_FLOOR_SECONDS,
    SENDBACK: SENDBACK_FLOOR_SECONDS,
    WAIT: WAIT_FLOOR_SECONDS,
}
# the states with a floor (a Queen round reads every order resting in one)
FLOOR_STATES: tuple[int, ...] = tuple(_FLOORS)
# After this many send-backs a red CI escalates instead of sending back again.
SENDBACK_CEILING = 2


def floor_seconds(state: int) -> int | None:
    """The floor of a state that has one (EMPTY, SENDBACK, WAIT), else None."""
    return _FLOORS.get(state)


def floor_passed(state: int, since_seconds: int) -> bool:
    """Whether an order in `state` for `since_seconds` has passed its floor."""
    floor = floor_seconds(state)
    return floor is not None and since_seconds >= floor


def ci_red_event(sendbacks: int) -> Event:
    """A red CI on accepted work sends it back, or escalates once the ceiling is reached."""
    return CI_RED_AT_CEILING if sendbacks >= SENDBACK_CEILING else CI_RED_UNDER_CEILING


# Outcome labels: a closed set, at most 64 characters, never a payload, never a cause
# that was not measured.
OUTCOME_MAX_CHARS = 64


class Outcome(StrEnum):
    """How an attempt ended: the closed set of labels (the stall reaper's label, which
    carries its bound, is `reaped_no_completion`)."""

    FINISHED = "finished"
    ENDED_BADLY = "ended badly"
    ENDED_UNEXPECTEDLY = "ended unexpectedly"
    REFUSED = "refused"
    QUOTA_EXHAUSTED = "quota exhausted"
    HANDED_BACK = "handed back"
    REAPED_AT_BOOT = "reaped at boot"
    REAPED_RUNNER_SILENT = "reaped: runner silent"
    CANCELLED = "cancelled"


class TurnOutcome(StrEnum):
    """How an agent's turn ended, as its adapter tells it (`hive.agents.base`): the bee
    sorts it into the order's `Outcome`. STOPPED is the adapter's own: the caller knows
    why it stopped the turn and names the order's outcome."""

    FINISHED = "finished"
    ENDED_BADLY = "ended badly"
    ENDED_UNEXPECTEDLY = "ended unexpectedly"
    STOPPED = "stopped"
    REFUSED = "refused"


FINISHED = Outcome.FINISHED
ENDED_BADLY = Outcome.ENDED_BADLY
ENDED_UNEXPECTEDLY = Outcome.ENDED_UNEXPECTEDLY
REFUSED_OUTCOME = Outcome.REFUSED
QUOTA_EXHAUSTED = Outcome.QUOTA_EXHAUSTED
HANDED_BACK = Outcome.HANDED_BACK
REAPED_AT_BOOT = Outcome.REAPED_AT_BOOT
REAPED_RUNNER_SILENT = Outcome.REAPED_RUNNER_SILENT
CANCELLED = Outcome.CANCELLED
OUTCOMES = frozenset(Outcome)
_NO_COMPLETION = re.compile(r"reaped: no completion within ([1-9][0-9]*) minutes")


def reaped_no_completion(minutes: int) -> str:
    """The two-hour rule's outcome for a bound of `minutes` (a positive whole number)."""
    if minutes < 1:
        raise ValueError(f"a stall bound is at least 1 minute, not {minutes}")
    label = f"reaped: no completion within {minutes} minutes"
    if len(label) > OUTCOME_MAX_CHARS:
        raise ValueError(f"a stall bound of {minutes} minutes makes an outcome over 64 characters")
    return label


def is_outcome(label: str) -> bool:
    """Whether `label` is one of the closed set of outcomes (and fits in 64 characters)."""
    if len(label) > OUTCOME_MAX_CHARS:
        return False
    return label in OUTCOMES or _NO_COMPLETION.fullmatch(label) is not None
