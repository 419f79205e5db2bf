"""A runner's turn fences itself (issue 15): it dies before its order can be handed on.

The stall reaper frees a runner's order once its heartbeat is `HIVE_RUNNER_SILENT_MINUTES`
old, and another runner may start the next attempt at once. A runner that is stopped
(SIGSTOP, a frozen VM) or cut off from the store cannot stop its own turn, which would
run on beside the next attempt. So each renewed claim also renews the turn's fence with
the runner's warden, a separate process: a turn whose claim went unrenewed for
`FENCE_SHARE` of the silent window is killed by the warden, before the reaper may act.
"""

from __future__ import annotations

FENCE_SHARE = 0.8  # of the silent window; the rest covers a late kill before the reaper acts
FENCE_MIN_BEATS = 3  # a fence shorter than three heartbeats would kill healthy turns


def turn_fence_seconds(silent_seconds: float, heartbeat_seconds: float) -> float | None:
    """How long a runner's turn may go without a renewed claim before its warden kills
    it; None (no fence) when the heartbeat is too slow for a fence to fit in the window."""
    fence = silent_seconds * FENCE_SHARE
    if fence < FENCE_MIN_BEATS * heartbeat_seconds:
        return None
    return fence
