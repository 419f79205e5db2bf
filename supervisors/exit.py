"""Exit reasons and the one-shot signal that carries them.

Every child (actor or supervisor) ends exactly once with an ``ExitReason``; whoever waits
for it (its supervisor, ``wait()``) learns the same reason.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class ExitReason:
    """Why something stopped. ``normal`` is OTP's normal/shutdown; anything else is abnormal
    (a crash, a kill, a supervisor that gave up) and is what ``transient`` restarts on."""

    normal: bool
    description: str
    exception: BaseException | None = None
    exit_code: int = 1  # what a process main exits with when this reason is abnormal

    def __str__(self) -> str:
        return self.description

    @classmethod
    def shutdown(cls, why: str = "shutdown") -> ExitReason:
        return cls(True, why)

    @classmethod
    def crash(cls, exc: BaseException) -> ExitReason:
        return cls(False, f"{type(exc).__name__}: {exc}", exc)


NORMAL = ExitReason(True, "normal")


class ExitSignal:
    """Set once with a reason; later sets are ignored. Callbacks run once, in the thread
    that sets it (or at once, when added after it was set). A raising callback is logged by
    the caller's thread machinery, never swallowed here, so keep callbacks tiny (a queue
    put)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._event = threading.Event()
        self._reason: ExitReason | None = None
        self._callbacks: list[Callable[[ExitReason], None]] = []

    @property
    def reason(self) -> ExitReason | None:
        return self._reason

    def is_set(self) -> bool:
        return self._event.is_set()

    def set(self, reason: ExitReason) -> bool:
        """Record the reason; ``False`` if one was already recorded."""
        with self._lock:
            if self._reason is not None:
                return False
            self._reason = reason
            callbacks, self._callbacks = self._callbacks, []
        self._event.set()
        for callback in callbacks:
            callback(reason)
        return True

    def add_callback(self, callback: Callable[[ExitReason], None]) -> None:
        with self._lock:
            reason = self._reason
            if reason is None:
                self._callbacks.append(callback)
                return
        callback(reason)

    def wait(self, timeout: float | None = None) -> bool:
        return self._event.wait(timeout)
