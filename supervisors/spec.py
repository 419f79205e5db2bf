"""Child specs: what a supervisor starts, when it restarts it, and how it stops it.

A spec is a declaration, frozen and cheap; the supervisor reads it, never the reverse.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


class Restart(enum.Enum):
    """When a child that exited is started again (OTP's restart type)."""

    PERMANENT = "permanent"  # always restarted, whatever the reason
    TRANSIENT = "transient"  # restarted only after an abnormal exit
    TEMPORARY = "temporary"  # never restarted, not even when a sibling's death takes it down


class ChildKind(enum.Enum):
    WORKER = "worker"
    SUPERVISOR = "supervisor"


class _BrutalKill:
    def __repr__(self) -> str:
        return "BRUTAL_KILL"


BRUTAL_KILL: Any = _BrutalKill()
"""Shutdown: do not ask, kill at once (the child's kill hook), and do not wait for it."""

INFINITY: float = math.inf
"""Shutdown: ask and wait as long as it takes (the default for a child supervisor)."""

DEFAULT_WORKER_SHUTDOWN_SECONDS = 5.0  # OTP's default for a worker

Shutdown = float | _BrutalKill
"""BRUTAL_KILL, a timeout in seconds (> 0), or INFINITY."""

Factory = Callable[..., Any]
"""Starts the child and returns it: an ``ActorRef`` of a ``SupervisedActor`` or a
``Supervisor`` (not yet started; its parent starts it). A pool's template factory receives
the arguments given to ``start_child``."""


class SpecError(ValueError):
    """A child spec (or a supervisor's set of specs) is invalid; the message is one line."""


@dataclass(frozen=True)
class ChildSpec:
    """One child of a supervisor: ``start(*args)`` makes it.

    ``shutdown`` defaults to ``INFINITY`` for a supervisor child and to
    ``DEFAULT_WORKER_SHUTDOWN_SECONDS`` for a worker.
    """

    id: str
    start: Factory
    restart: Restart = Restart.PERMANENT
    shutdown: Shutdown | None = None
    kind: ChildKind = ChildKind.WORKER
    args: tuple[Any, ...] = field(default=())

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not self.id:
            raise SpecError(f"child id must be a non-empty string, got {self.id!r}")
        if not callable(self.start):
            raise SpecError(f"child {self.id!r}: start must be callable, got {self.start!r}")
        if not isinstance(self.restart, Restart):
            raise SpecError(f"child {self.id!r}: restart must be a Restart, got {self.restart!r}")
        if not isinstance(self.kind, ChildKind):
            raise SpecError(f"child {self.id!r}: kind must be a ChildKind, got {self.kind!r}")
        if self.shutdown is None:
            default = (
                INFINITY if self.kind is ChildKind.SUPERVISOR else DEFAULT_WORKER_SHUTDOWN_SECONDS
            )
            object.__setattr__(self, "shutdown", default)
        shutdown = self.shutdown
        if shutdown is BRUTAL_KILL:
            return
        if isinstance(shutdown, bool) or not isinstance(shutdown, int | float) or not shutdown > 0:
            raise SpecError(
                f"child {self.id!r}: shutdown must be BRUTAL_KILL, seconds > 0 or INFINITY, "
                f"got {shutdown!r}"
            )

    @property
    def shutdown_seconds(self) -> float | None:
        """The stop timeout in seconds, ``None`` for BRUTAL_KILL, ``inf`` for INFINITY."""
        return None if self.shutdown is BRUTAL_KILL else float(self.shutdown)  # type: ignore[arg-type]


def check_unique_ids(specs: list[ChildSpec]) -> None:
    seen: set[str] = set()
    for spec in specs:
        if spec.id in seen:
            raise SpecError(f"duplicate child id {spec.id!r}")
        seen.add(spec.id)
