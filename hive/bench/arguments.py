"""argparse types for the benchmarks' options: a number within a range, or argparse's
one-line error (exit 2) naming the value and the range."""

from __future__ import annotations

import argparse
from collections.abc import Callable


def whole(low: int, high: int) -> Callable[[str], int]:
    """A whole number from `low` to `high`."""

    def parse(raw: str) -> int:
        if not raw.isdigit() or not low <= int(raw) <= high:
            raise argparse.ArgumentTypeError(f"{raw!r} is not a whole number from {low} to {high}")
        return int(raw)

    return parse


def seconds(low: float, high: float) -> Callable[[str], float]:
    """A number of seconds from `low` to `high`."""

    def parse(raw: str) -> float:
        try:
            value = float(raw)
        except ValueError:
            value = float("nan")  # fails the range check below: one message for both
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(
                f"{raw!r} is not a number of seconds from {low:g} to {high:g}"
            )
        return value

    return parse
