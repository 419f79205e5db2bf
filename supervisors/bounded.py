"""A pass bounded in time (a round of work that may hang: past its bound it is abandoned).

A Python thread cannot be killed, so the pass runs in a thread of its own and reports
its progress through `Progress.at(step)`; past the bound the caller stops waiting, the
progress is marked abandoned, and the pass's next `at()` raises, so it acts no more. The
step it was on names where it got stuck.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

T = TypeVar("T")


class Abandoned(Exception):
    """Raised by `Progress.at` in a pass that is past its bound."""


@dataclass
class Progress:
    step: str = "starting"
    abandoned: threading.Event = field(default_factory=threading.Event)

    def at(self, step: str) -> None:
        """The pass goes on to `step`; raises Abandoned once it is past its bound."""
        if self.abandoned.is_set():
            raise Abandoned(step)
        self.step = step


@dataclass(frozen=True)
class Outcome(Generic[T]):
    """The pass's value, or `stuck_at` (the step it was on) when it was abandoned."""

    value: T | None
    stuck_at: str | None = None


def run_bounded(name: str, bound_seconds: float, work: Callable[[Progress], T]) -> Outcome[T]:
    """Run `work(progress)` in a thread; wait up to `bound_seconds`. A raise in `work`
    is raised here."""
    progress = Progress()
    answer: list[T] = []
    failure: list[BaseException] = []

    def run() -> None:
        try:
            answer.append(work(progress))
        except Abandoned:
            pass
        except BaseException as exc:
            failure.append(exc)

    thread = threading.Thread(target=run, name=name, daemon=True)
    thread.start()
    thread.join(bound_seconds)
    if thread.is_alive():
        progress.abandoned.set()
        return Outcome(None, progress.step)
    if failure:
        raise failure[0]
    return Outcome(answer[0])
