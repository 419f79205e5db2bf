"""The registry of work this process holds, which the drain sorts (seed 002, section 1).

Any object with `kind` (a `hive.rules.drain.WK_*`), `id` and `ended` may be registered;
the stoppable kinds also have `stop()` (a review) or `hand_back()` (a bee). Bees register
themselves; reviews, jobs and waits come in later issues, and tests register doubles.
An item leaves the registry once it ended (the function `add` returned); that sets
`left`, which wakes the drain at once instead of at its next step.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Protocol, runtime_checkable

from hive.rules.drain import DV_HOLD, WorkKind, drain_verdict

# Long enough that no held piece of work is past it: asks the rule "would this be held?"
_NEVER_SECONDS = 2**31


@runtime_checkable
class WorkItem(Protocol):
    kind: WorkKind
    id: str

    @property
    def ended(self) -> bool: ...


class WorkRegistry:
    """Thread-safe: bees add and remove themselves from their own threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: dict[int, WorkItem] = {}
        # set whenever an item leaves (it ended): the drain waits on it between steps
        self.left = threading.Event()

    def add(self, item: WorkItem) -> Callable[[], None]:
        """Register `item`; returns the function that removes it (safe twice)."""
        with self._lock:
            self._items[id(item)] = item

        def remove() -> None:
            with self._lock:
                self._items.pop(id(item), None)
            self.left.set()

        return remove

    def items(self) -> list[WorkItem]:
        with self._lock:
            return list(self._items.values())

    def holding(self) -> int:
        """How many pieces of work the drain would hold now (bees that have not ended)."""
        return sum(
            1
            for item in self.items()
            if drain_verdict(item.kind, item.ended, 0, _NEVER_SECONDS) == DV_HOLD
        )


class Standing:
    """A source of work that is there as long as its actor runs (the Queen's rounds):
    registered so the drain sees it and leaves it, as the card says of rounds."""

    def __init__(self, kind: WorkKind, name: str) -> None:
        self.kind = kind
        self.id = name
        self._ended = threading.Event()

    @property
    def ended(self) -> bool:
        return self._ended.is_set()

    def end(self) -> None:
        self._ended.set()
