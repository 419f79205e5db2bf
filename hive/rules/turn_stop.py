"""Stopping a turn (RULES 2; turn_stop.t27): abort, a grace, then the escalation.

A turn is an OS process in its own group, so the escalation kills the whole group (one pid
would leave its children running). A turn that cannot be killed (a thread) is abandoned:
it keeps its slot until it ends, and every capacity count includes it.
"""

from __future__ import annotations

from enum import IntEnum

# The abort is sent, then this much grace before the escalation.
TURN_STOP_GRACE_MS = 3000
# How long a SIGKILL to the group takes to land, at most.
KILL_LANDS_MS = 2000
# A stopped turn's slot is free within this long of its abort.
LANE_FREE_MS = 5000


class Escalation(IntEnum):
    """What the escalation does once the grace has passed."""

    NOTHING = 0  # the turn ended on its own
    KILL_GROUP = 1  # SIGKILL to the turn's whole process group
    ABANDON = 2  # cannot be killed: let it run out, still counted as in flight


class Step(IntEnum):
    """What an abort does to a step in progress."""

    RUN = 0  # it runs to its end (a finalizer, or a shared write already started)
    SKIP = 1  # it never starts (a shared write not yet started)
    CUT = 2  # it is cut where it stands


ESC_NOTHING = Escalation.NOTHING
ESC_KILL_GROUP = Escalation.KILL_GROUP
ESC_ABANDON = Escalation.ABANDON
STEP_RUN = Step.RUN
STEP_SKIP = Step.SKIP
STEP_CUT = Step.CUT

# in_flight saturates here rather than growing past what a u32 counter holds.
IN_FLIGHT_MAX = 2**32 - 1


def escalation(kill_stops_it: bool, ended: bool) -> Escalation:
    """What to do once the grace has passed: nothing, kill the group, or abandon the turn."""
    if ended:
        return ESC_NOTHING
    if kill_stops_it:
        return ESC_KILL_GROUP
    return ESC_ABANDON


def in_flight(running: int, held_after_kill: int) -> int:
    """Turns that hold a slot: the running ones plus the abandoned ones that have not ended."""
    return min(running + held_after_kill, IN_FLIGHT_MAX)


def step_on_abort(started: bool, writes_shared: bool, finalizer: bool) -> Step:
    """Whether a step runs, never starts, or is cut when its turn is aborted.

    A half-done write to shared state (the worktree list, a bundle import) would leave it
    broken for every other turn, so a started one finishes and an unstarted one never starts.
    """
    if finalizer:
        return STEP_RUN
    if writes_shared:
        return STEP_RUN if started else STEP_SKIP
    return STEP_CUT
