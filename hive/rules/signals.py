"""Signals (RULES 1; actors.t27): what a turn's own timer and a stopper send now.

The drain card reuses both: `turn_signal` tells whether a turn's bound is short enough to
redo, and `stop_signal` tells when a stopped turn's grace has run out.
"""

from __future__ import annotations

from enum import IntEnum


class Exit(IntEnum):
    """Why an actor or a turn ended, or (NONE) that nothing is sent yet."""

    NORMAL = 0
    SHUTDOWN = 1
    KILL = 2
    KILLED = 3
    CRASH = 4
    NONE = 99


X_NORMAL = Exit.NORMAL
X_SHUTDOWN = Exit.SHUTDOWN
X_KILL = Exit.KILL
X_KILLED = Exit.KILLED
X_CRASH = Exit.CRASH
X_NONE = Exit.NONE

# A turn that names no bound (bound 0) is cut after this long.
TURN_MAX_SECONDS = 3600


def turn_signal(age_seconds: int, bound_seconds: int) -> Exit:
    """X_KILL once the turn is as old as its bound (0 meaning TURN_MAX_SECONDS), else X_NONE."""
    bound = TURN_MAX_SECONDS if bound_seconds == 0 else bound_seconds
    if age_seconds >= bound:
        return X_KILL
    return X_NONE


def stop_signal(waited_ms: int, timeout_ms: int) -> Exit:
    """What a stopper sends after waiting `waited_ms` on a stop with `timeout_ms` of grace.

    X_KILL once the grace is over (a timeout of 0 is a brutal kill); X_SHUTDOWN at the moment
    the stop is sent; X_NONE while it waits.
    """
    if waited_ms >= timeout_ms:
        return X_KILL
    if waited_ms == 0:
        return X_SHUTDOWN
    return X_NONE
