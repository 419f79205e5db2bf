"""The signal bridge, and ``run_main``, which runs a tree as a process's main. SIGTERM or
SIGINT starts the root's orderly shutdown. A second signal is a hard stop.

On the first signal the bridge runs the application's drain hooks in its own thread, in
the order they were added. The whole tree keeps running meanwhile, so a drain may take
as long as it needs. When the last hook returns, the root stops its children in reverse
order.

A second signal at any time, during the drain too, is a hard stop. Every kill hook in
the tree runs, the root exits at once, and ``run_main`` exits the process with
``128 + signal``.

The previous handlers come back when the bridge is uninstalled, at the end of
``run_main`` or of the ``with`` block. That must happen in the main thread.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterable
from types import FrameType
from typing import Any, NoReturn

from supervisors.exit import ExitReason
from supervisors.supervisor import Supervisor

log = logging.getLogger("supervisors")

DrainHook = Callable[[int], None]
"""Called with the signal number (0 for ``request_stop()``) in the bridge's thread; the
ordered stop waits for it to return. A raise is logged and the stop goes on."""

DEFAULT_SIGNALS = (signal.SIGTERM, signal.SIGINT)
_WAIT_SLICE_SECONDS = 0.5  # the main thread wakes this often so a signal is never stuck


class SignalBridge:
    def __init__(self, root: Supervisor | None = None, signals: Iterable[int] = DEFAULT_SIGNALS):
        self.root = root
        self.signals = tuple(signals)
        self.first_signal = threading.Event()
        self.hard_stopped = threading.Event()
        # set while the root is not starting: a signal during `run`'s start drains once
        # every child has started (the drain hooks are added by children's on_start)
        self.started = threading.Event()
        self.started.set()
        self.signum = 0
        self._hooks: list[DrainHook] = []
        self._lock = threading.Lock()
        self._previous: dict[int, Any] = {}
        self._thread: threading.Thread | None = None

    def add_drain_hook(self, hook: DrainHook) -> Callable[[], None]:
        """Run ``hook`` before the ordered stop begins. Returns a function that removes it.
        It is thread-safe. An actor may add its hook in ``on_start`` and remove it in
        ``on_stop``."""
        with self._lock:
            self._hooks.append(hook)

        def remove() -> None:
            with self._lock:
                if hook in self._hooks:
                    self._hooks.remove(hook)

        return remove

    def install(self, root: Supervisor | None = None) -> SignalBridge:
        """Take over the signals (main thread only). Installing twice is a no-op."""
        self.root = root or self.root
        if self.root is None:
            raise ValueError("SignalBridge.install needs the root supervisor")
        if not self._previous:
            for signum in self.signals:
                self._previous[signum] = signal.signal(signum, self._on_signal)
        return self

    def uninstall(self) -> None:
        """Give the signals back to their previous handlers. Main thread only; safe twice."""
        previous, self._previous = self._previous, {}
        for signum, handler in previous.items():
            signal.signal(signum, handler)

    def __enter__(self) -> SignalBridge:
        return self.install()

    def __exit__(self, *exc: object) -> None:
        self.uninstall()

    def request_stop(self, signum: int = 0) -> None:
        """Do what the first signal does, from any thread: drain, then the ordered stop. A
        second call is the hard stop."""
        with self._lock:
            first = not self.first_signal.is_set()
            self.first_signal.set()
            if first:
                self.signum = signum
                self._thread = threading.Thread(
                    target=self._drain_then_stop, args=(signum,), name="signal-bridge", daemon=True
                )
                self._thread.start()
                return
        self.hard_stop(signum)

    def hard_stop(self, signum: int = 0) -> None:
        """Kill the tree now (kill hooks everywhere) and let the root exit at once."""
        self.hard_stopped.set()
        name = signal.Signals(signum).name if signum else "request"
        reason = ExitReason(False, f"hard stop: second signal ({name})", exit_code=128 + signum)
        if self.root is not None:
            self.root.kill(reason)

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        # Runs in the main thread between bytecodes: hand off at once, never block here.
        threading.Thread(target=self.request_stop, args=(signum,), daemon=True).start()

    def _drain_then_stop(self, signum: int) -> None:
        name = signal.Signals(signum).name if signum else "request"
        while not self.started.wait(_WAIT_SLICE_SECONDS):
            if self.hard_stopped.is_set():
                return
        log.info(f"{name}: draining before the ordered stop", extra={"event": "drain_started"})
        with self._lock:
            hooks = list(self._hooks)
        for hook in hooks:
            if self.hard_stopped.is_set():
                return
            try:
                hook(signum)
            except Exception:
                log.exception(
                    "a drain hook raised; stopping anyway", extra={"event": "drain_failed"}
                )
        if self.hard_stopped.is_set() or self.root is None:
            return
        log.info(f"{name}: drained; ordered stop begins", extra={"event": "drain_ended"})
        self.root.stop(ExitReason.shutdown(f"shutdown ({name})"), block=False)


def run(root: Supervisor, bridge: SignalBridge | None = None) -> ExitReason:
    """Start ``root`` under a signal bridge in the main thread and wait for its exit.
    Returns the root's exit reason (a failed start is an abnormal reason, not a raise)."""
    from supervisors.child import StartError

    bridge = bridge or SignalBridge()
    bridge.install(root)
    bridge.started.clear()
    try:
        try:
            root.start()
        except StartError as exc:
            return ExitReason(False, str(exc), exc)
        finally:
            bridge.started.set()
        while True:
            reason = root.wait(_WAIT_SLICE_SECONDS)
            if reason is not None:
                return reason
    finally:
        bridge.uninstall()


def exit_code(reason: ExitReason) -> int:
    return 0 if reason.normal else (reason.exit_code or 1)


def run_main(root: Supervisor, bridge: SignalBridge | None = None) -> NoReturn:
    """Run the tree as the process's main. It exits 0 after an orderly stop, else non-zero
    with the reason on stderr. Threads that could not be stopped (abandoned) do not hold
    the process; it then ends with ``os._exit``."""
    reason = run(root, bridge)
    code = exit_code(reason)
    if code:
        print(f"{root.name}: {reason}", file=sys.stderr, flush=True)
    lingering = [
        t for t in threading.enumerate() if t is not threading.main_thread() and not t.daemon
    ]
    if lingering or code >= 128:
        names = ", ".join(t.name for t in lingering)
        log.warning(f"exiting with threads still running: {names}", extra={"event": "abandoned"})
        logging.shutdown()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)
