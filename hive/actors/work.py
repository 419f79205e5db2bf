"""The one registry of work this process holds. It holds bees and the Queen's rounds,
and reviews, jobs and waits too. The drain sorts it (seed 002, section 1). The bee host
counts its bees in it. The reapers spare their issues.

Any object with `kind` (a `hive.rules.drain.WorkKind`), `id` and `ended` may be
registered. The stoppable kinds also have `stop()` (a review) or `hand_back()` (a bee).
An item leaves the registry once it ended, by calling the function `add` returned. That
tells the drain `WorkLeft`, so the drain steps at once instead of at its next step.

Once the drain began (`begin_drain`), nothing new starts here. The host refuses bees,
readiness answers 503 and the claimer claims nothing.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable
from typing import Protocol, runtime_checkable

from hive.actors.messages import DRAIN, WorkLeft
from hive.rules.drain import DV_HOLD, WorkKind, drain_verdict
from supervisors import Registry

# Long enough that no held piece of work is past it: asks the rule "would this be held?"
_NEVER_SECONDS = 2**31


@runtime_checkable
class WorkItem(Protocol):
    kind: WorkKind
    id: str

    @property
    def ended(self) -> bool: ...


class WorkRegistry:
    """The registry (see the module). It is thread-safe, since bees add and remove
    themselves from their own threads."""

    def __init__(self, names: Registry | None = None) -> None:
        self._lock = threading.Lock()
        self._items: dict[int, WorkItem] = {}
        self._keys = itertools.count()
        self._names = names or Registry()
        self._draining = False

    def add(self, item: WorkItem) -> Callable[[], None]:
        """Register `item`. Returns the function that removes it, which is safe twice."""
        with self._lock:
            return self._add(item)

    def admit(self, item: WorkItem) -> Callable[[], None] | None:
        """Register `item`, new work starting here. None once the drain began; the item
        is then not registered."""
        with self._lock:
            return None if self._draining else self._add(item)

    def _add(self, item: WorkItem) -> Callable[[], None]:
        key = next(self._keys)
        self._items[key] = item

        def remove() -> None:
            with self._lock:
                left = self._items.pop(key, None) is not None
            if left:
                self._names.tell(DRAIN, WorkLeft(item.id))

        return remove

    def items(self) -> list[WorkItem]:
        with self._lock:
            return list(self._items.values())

    def bees(self) -> list[WorkItem]:
        """The bees registered (started and not yet left)."""
        return [item for item in self.items() if item.kind == WorkKind.BEE]

    def holding(self) -> int:
        """How many pieces of work the drain would hold now (bees that have not ended)."""
        return sum(
            1
            for item in self.items()
            if drain_verdict(item.kind, item.ended, 0, _NEVER_SECONDS) == DV_HOLD
        )

    def begin_drain(self) -> None:
        """Nothing new starts here from now on (safe twice)."""
        with self._lock:
            self._draining = True

    @property
    def draining(self) -> bool:
        with self._lock:
            return self._draining


class Standing:
    """A source of work that is there as long as its actor runs, such as the Queen's
    rounds. It is registered so the drain sees it and leaves it, as the card says of
    rounds."""

    def __init__(self, kind: WorkKind, name: str) -> None:
        self.kind = kind
        self.id = name
        self._ended = threading.Event()

    @property
    def ended(self) -> bool:
        return self._ended.is_set()

    def end(self) -> None:
        self._ended.set()
