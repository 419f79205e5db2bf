"""Which waiting endings go into the next statement (a runner's group commit).

The endings a runner's bees hand over while one statement is being written wait, in the
order they came, and the next statement writes as many of them from the front as these
rules allow: at most ENDINGS_A_STATEMENT of them, whose bundles and conversations come
to at most ENDING_BYTES_A_STATEMENT together (one ending alone always goes, whatever
its size), never two endings of one issue (the second waits for the statement after:
one statement writes each issue's bundle and conversation once, and they land in the
order they came), and no ending that ends its key's rest after one that rests a key (a
refusal): the statement ends every rest it ends before its refusals rest theirs, in
their order, so a refusal goes after the others, as it came. Endings that wait for
nothing are never held back: the first ending to come while none is being written is
written at once, alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

ENDINGS_A_STATEMENT = 64
ENDING_BYTES_A_STATEMENT = 32 * 1024 * 1024


@dataclass(frozen=True)
class Waiting:
    """An ending waiting for its statement: its issue, the bytes it stores (its bundle
    and its conversation), and whether it rests its key (a refusal)."""

    issue: int
    size_bytes: int = 0
    rests_key: bool = False


def next_batch(
    waiting: Sequence[Waiting],
    most: int = ENDINGS_A_STATEMENT,
    most_bytes: int = ENDING_BYTES_A_STATEMENT,
) -> int:
    """How many endings from the front of `waiting` the next statement writes: 0 only
    when none waits. Raises ValueError for a bound under 1."""
    if most < 1 or most_bytes < 1:
        raise ValueError(
            f"a statement holds at least one ending and one byte, not {most}, {most_bytes}"
        )
    issues: set[int] = set()
    size = 0
    rested = False
    for taken, ending in enumerate(waiting):
        if taken == most or ending.issue in issues or (rested and not ending.rests_key):
            return taken
        rested = rested or ending.rests_key
        size += ending.size_bytes
        if taken and size > most_bytes:
            return taken
        issues.add(ending.issue)
    return len(waiting)


def one_statement(waiting: Sequence[Waiting]) -> bool:
    """Whether `waiting` may be written in one statement as it is, whatever its count
    and size: no issue twice, no refusal before an ending that is none."""
    return next_batch(waiting, most=max(1, len(waiting)), most_bytes=_NO_BOUND) == len(waiting)


_NO_BOUND = 2**63
