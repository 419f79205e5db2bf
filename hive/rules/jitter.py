"""A bounded poll with jitter: pollers that start together (a host's runners after a
deploy, a thousand claim loops) drift apart instead of asking the store in step, every
poll, for ever."""

from __future__ import annotations

# a runner's poll (HIVE_RUNNER_SECONDS) moves by up to this fraction of itself either way
POLL_JITTER = 0.1


def jittered(seconds: float, draw: float, fraction: float = POLL_JITTER) -> float:
    """`seconds` moved by up to `fraction` of itself either way, where `draw` (in [0, 1],
    a random draw) falls: 0 is the shortest wait, 1 the longest. ValueError for a draw
    or a fraction out of range, or a negative `seconds`."""
    if not 0.0 <= draw <= 1.0:
        raise ValueError(f"a jitter draw is from 0 to 1, not {draw}")
    if not 0.0 <= fraction < 1.0:
        raise ValueError(f"a jitter fraction is from 0 to below 1, not {fraction}")
    if seconds < 0:
        raise ValueError(f"a poll cannot wait {seconds} s")
    return seconds * (1.0 - fraction + 2.0 * fraction * draw)
