"""What a supervisor's own thread is told, one message at a time, and the phases of its
life. Every decision (restart, give up, stop) is taken in that thread, in the order these
arrive on its queue."""

from __future__ import annotations

import enum
import queue
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from supervisors.child import Running
from supervisors.exit import ExitReason


class Phase(enum.Enum):
    """Where a supervisor is in its life; it only moves forward."""

    NEW = "new"
    STARTING = "starting"
    RUNNING = "running"
    STOPPING = "stopping"
    STOPPED = "stopped"


@dataclass(frozen=True)
class StopAll:
    """Stop every child in reverse start order, then exit with ``reason``."""

    reason: ExitReason


@dataclass(frozen=True)
class Answer:
    """What a ``Call`` returned (``ok``) or raised."""

    ok: bool
    value: Any


@dataclass(frozen=True)
class Call:
    """Run ``fn`` in the supervisor's thread and put its ``Answer`` on ``answer``."""

    fn: Callable[[], Any]
    answer: queue.Queue[Answer] = field(compare=False)


@dataclass(frozen=True)
class ChildExited:
    """Child ``child_id`` exited with ``reason``. ``running`` is the handle that exited,
    or None when a restart failed (the failure counts like an exit)."""

    child_id: str
    running: Running | None
    reason: ExitReason


Message = StopAll | Call | ChildExited
