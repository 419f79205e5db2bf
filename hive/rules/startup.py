"""How `hive serve` waits for the store at start: a process started beside its database
(a pod next to PostgreSQL, a deploy during a failover) waits for it instead of exiting
at the first refusal, up to `HIVE_STORE_WAIT_SECONDS`; then it exits 2 in one line, as
every command does when the store cannot be reached.

The pauses between attempts start at FIRST_PAUSE_SECONDS and double up to
MAX_PAUSE_SECONDS, never past the time left. Pure: time comes in as arguments.
"""

from __future__ import annotations

FIRST_PAUSE_SECONDS = 0.5
MAX_PAUSE_SECONDS = 5.0
STORE_WAIT_DEFAULT_SECONDS = 60
STORE_WAIT_MAX_SECONDS = 3600
# 0.5 s * 2**4 is past the cap already
_MAX_DOUBLINGS = 4


def store_wait_pause(failed_attempts: int, left_seconds: float) -> float | None:
    """The pause before the next attempt to reach the store after `failed_attempts`
    (1 or more) failed with `left_seconds` of the wait left; None: give up now."""
    if failed_attempts < 1:
        raise ValueError(f"failed_attempts is counted from 1, not {failed_attempts}")
    if left_seconds <= 0:
        return None
    doublings = min(failed_attempts - 1, _MAX_DOUBLINGS)
    pause: float = FIRST_PAUSE_SECONDS * 2**doublings
    return min(pause, MAX_PAUSE_SECONDS, left_seconds)
