"""Reports: every start, exit, restart, give-up and shutdown step is one structured log
record (logger ``supervisors``, fields in ``extra=``) and one in-process counter.

Counters are plain integers keyed by event name (``supervisor.stats()``); an application
maps them to its own metrics with an ``on_event`` hook, which receives every ``Event``.
"""

from __future__ import annotations

import logging
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger("supervisors")

CHILD_STARTED = "child_started"
CHILD_START_FAILED = "child_start_failed"
CHILD_EXITED = "child_exited"
CHILD_RESTARTED = "child_restarted"
GAVE_UP = "gave_up"
SHUTDOWN_STEP = "shutdown_step"
SUPERVISOR_STOPPED = "supervisor_stopped"
HARD_STOP = "hard_stop"

_LEVELS = {
    CHILD_START_FAILED: logging.ERROR,
    GAVE_UP: logging.ERROR,
    HARD_STOP: logging.WARNING,
}


@dataclass(frozen=True)
class Event:
    name: str  # one of the constants above
    supervisor: str
    child: str | None
    message: str
    fields: dict[str, Any] = field(default_factory=dict)


EventHook = Callable[[Event], None]


class Reporter:
    """Logs and counts one supervisor's events; thread-safe."""

    def __init__(self, supervisor: str, hook: EventHook | None = None) -> None:
        self.supervisor = supervisor
        self.hook = hook
        self._counts: Counter[str] = Counter()
        self._lock = threading.Lock()

    def emit(self, name: str, child: str | None, message: str, **fields: Any) -> None:
        with self._lock:
            self._counts[name] += 1
            if name == SHUTDOWN_STEP and "outcome" in fields:
                self._counts[f"shutdown_{fields['outcome']}"] += 1
        level = _LEVELS.get(name, logging.INFO)
        if name == CHILD_EXITED and not fields.get("normal", True):
            level = logging.WARNING
        if name == SHUTDOWN_STEP and fields.get("outcome") == "abandoned":
            level = logging.ERROR
        extra = {"event": name, "supervisor": self.supervisor, "child": child, **fields}
        log.log(level, f"{self.supervisor}: {message}", extra=extra)
        hook = self.hook
        if hook is not None:
            try:
                hook(Event(name, self.supervisor, child, message, dict(fields)))
            except Exception:
                log.exception("the on_event hook raised", extra={"event": "hook_failed"})

    def stats(self) -> dict[str, int]:
        with self._lock:
            return dict(self._counts)
