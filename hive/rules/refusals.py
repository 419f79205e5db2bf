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


def waits_for_no_runner(
    refused_by: Sequence[str],
    live_runners: Collection[str],
    queued_seconds: float,
    window_seconds: float,
) -> bool:
    """True when a queued, unclaimed order nobody refused has waited `window_seconds`
    and no runner was seen within the window: nothing will take it until one starts, so
    a person is told (it stays queued: a runner that starts claims it)."""
    return not refused_by and not live_runners and queued_seconds >= window_seconds


def no_runner_sentence(issues: Sequence[int], window_seconds: float) -> str:
    """What a person is told about the orders no runner is there to take."""
    named = ", ".join(f"#{n}" for n in issues[:NAMED_RUNNERS_MAX])
    if len(issues) > NAMED_RUNNERS_MAX:
        named += f" and {len(issues) - NAMED_RUNNERS_MAX} more"
    return (
        f"{named} queued for a runner, and no runner has been seen for {window_seconds:g} s: "
        "start one (hive serve with HIVE_ROLE=runner and the keys) to take them"
    )


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
