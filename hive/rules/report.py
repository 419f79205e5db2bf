"""A round's report: how long it may grow, and when it is written.

How long (issue 25): a round names every refusal and every skipped issue with its
reason, and with thousands of issues that would be a report of hundreds of kilobytes
every tick. The first REPORT_LINES_MAX lines are kept (refusals first, then skips in
listing order) and one more line says how many were left out.

When (issue 28): a round writes its report when it says something else than the last
one its Queen wrote, and the same again only once REPORT_REPEAT_SECONDS passed since
that one, so a state that lasts still shows in the history (`hive why` folds the repeats
as "xN since") without a row every round: rounds come at every wake, several a second
while work flows."""

from __future__ import annotations

from collections.abc import Sequence

REPORT_LINES_MAX = 100
REPORT_REPEAT_SECONDS = 300.0

# what a report says: its headline, its body, whether a person must act
Said = tuple[str, str, bool]


def report_due(
    last: Said | None,
    said: Said,
    since_last_seconds: float,
    repeat_seconds: float = REPORT_REPEAT_SECONDS,
) -> bool:
    """Whether a round that says `said` writes it: it differs from `last` (the last
    report this Queen wrote, None before her first), or `last` is `repeat_seconds` old."""
    return last != said or since_last_seconds >= repeat_seconds


def report_lines(lines: Sequence[str], most: int = REPORT_LINES_MAX) -> list[str]:
    """`lines` cut to `most`, with a last line counting what was left out."""
    if len(lines) <= most:
        return list(lines)
    left = len(lines) - most
    return [*lines[:most], f"... and {left} more not named (a round names at most {most})"]
