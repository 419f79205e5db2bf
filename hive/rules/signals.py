"""Signals (RULES 1; actors.t27): what a turn's own timer and a stopper send now.

The drain card reuses both: `turn_signal` tells whether a turn's bound is short enough to
redo, and `stop_signal` tells when a stopped turn's grace has run out.
"""

from __future__ import annotations

# Exit reasons: why an actor or a turn ended, or (X_NONE) that nothing is sent yet.
X_NORMAL = 0
X_SHUTDOWN = 1
X_KILL = 2
X_KILLED = 3
X_CRASH = 4
X_NONE = 99

# A turn that names no bound (bound 0) is cut after this long.
TURN_MAX_SECONDS = 3600


def turn_signal(age_seconds: int, bound_seconds: int) -> int:
    """X_KILL once the turn is as old as its bound (0 meaning TURN_MAX_SECONDS), else X_NONE."""
    bound = TURN_MAX_SECONDS if bound_seconds == 0 else bound_seconds
    if age_seconds >= bound:
        return X_KILL
    return X_NONE


def stop_signal(waited_ms: int, timeout_ms: int) -> int:
    """What a stopper sends after waiting `waited_ms` on a stop with `timeout_ms` of grace.

    X_KILL once the grace is over (a timeout of 0 is a brutal kill); X_SHUTDOWN at the moment
    the stop is sent; X_NONE while it waits.
    """
    if waited_ms >= timeout_ms:
        return X_KILL
    if waited_ms == 0:
        return X_SHUTDOWN
    return X_NONE
