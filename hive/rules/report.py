"""How long a round's report may grow (issue 25): a round names every refusal and every
skipped issue with its reason, and with thousands of issues that would be a report of
hundreds of kilobytes every tick. The first REPORT_LINES_MAX lines are kept (refusals
first, then skips in listing order) and one more line says how many were left out."""

from __future__ import annotations

from collections.abc import Sequence

REPORT_LINES_MAX = 100


def report_lines(lines: Sequence[str], most: int = REPORT_LINES_MAX) -> list[str]:
    """`lines` cut to `most`, with a last line counting what was left out."""
    if len(lines) <= most:
        return list(lines)
    left = len(lines) - most
    return [*lines[:most], f"... and {left} more not named (a round names at most {most})"]
