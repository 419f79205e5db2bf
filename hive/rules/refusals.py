"""An order no runner can take: every live runner refused it (none has its key), so it
would stay queued for ever, holding its files and its key's lane.

Once it has been queued for the window (the runners' silent window: a runner that has
not been seen for that long is gone, and a new one has had the time to come and claim
it) and every runner seen within that window is among its refusers, it ends as
`refused`, with a sentence naming the runners that refused it. Pure: the caller passes
the facts and the time.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

NAMED_RUNNERS_MAX = 5  # a sentence names this many runners, then counts the rest


def refused_everywhere(
    refused_by: Sequence[str],
    live_runners: Collection[str],
    queued_seconds: float,
    window_seconds: float,
) -> bool:
    """True when a queued, unclaimed order has waited `window_seconds` and every runner
    seen within the window refused it (at least one runner refused it)."""
    if not refused_by or queued_seconds < window_seconds:
        return False
    return set(live_runners) <= set(refused_by)


def refusal_sentence(refused_by: Sequence[str], key_index: int | None) -> str:
    """Why the order ended: the refusing runners by name, and what would help."""
    names = list(dict.fromkeys(refused_by))
    shown = ", ".join(names[:NAMED_RUNNERS_MAX])
    if len(names) > NAMED_RUNNERS_MAX:
        shown += f" and {len(names) - NAMED_RUNNERS_MAX} more"
    key = f"key #{key_index}" if key_index is not None else "its key"
    return (
        f"every runner refused it ({shown}): none has {key}; give a runner that key, "
        "or the Queen fewer keys"
    )
