"""A SIGTERM or SIGINT to `hive chaos` stops the run: `Interrupted` is raised in the
main thread, and the run's own ending (hive/chaos/run.py) stops every process it
started, as after its last fault.

While the run does something that must not be cut in half (start a process and note
it, start or stop the server, the ending itself), it holds the signals (`held()`): one
that comes meanwhile is raised once that is done. A second signal while stopping is
ignored: the ending runs whole, once.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


class Interrupted(BaseException):
    """The run was told to stop by `signum`. Not an Exception, like KeyboardInterrupt:
    no `except Exception` on the way catches it by accident."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name


class _Stops:
    def __init__(self) -> None:
        self.got: int | None = None  # the first stop signal, once one came
        self._raised = False
        self._held = 0
        self._installed = False

    def handle(self, signum: int, frame: FrameType | None) -> None:
        if self.got is not None:
            return  # stopping already
        self.got = signum
        if not self._held:
            self._raised = True
            raise Interrupted(signum)

    @contextmanager
    def installed(self) -> Iterator[None]:
        """SIGTERM and SIGINT raise `Interrupted` in the main thread within; the
        handlers before are put back after."""
        before = {sig: signal.signal(sig, self.handle) for sig in STOP_SIGNALS}
        self.got, self._raised, self._held, self._installed = None, False, 0, True
        try:
            yield
        finally:
            self._installed = False
            for sig, handler in before.items():
                signal.signal(sig, handler)

    @contextmanager
    def held(self) -> Iterator[None]:
        """A stop signal that comes within is raised at its end (in the main thread
        with the handlers installed; elsewhere this holds nothing)."""
        if not self._installed or threading.current_thread() is not threading.main_thread():
            yield
            return
        self._held += 1
        try:
            yield
        finally:
            self._held -= 1
        if not self._held and self.got is not None and not self._raised:
            self._raised = True
            raise Interrupted(self.got)


_stops = _Stops()
installed = _stops.installed
held = _stops.held
