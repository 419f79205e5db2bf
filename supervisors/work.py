"""Long work outside the message handler: a subprocess in its own process group, watched
by a thread that tells the actor when it ends.

The rule: a pykka stop is a message, queued behind the one being handled, and a thread
cannot be killed; so a handler that runs for an hour makes its actor unstoppable for an
hour. The pattern::

    class BeeActor(SupervisedActor):
        def run_turn(self, argv):                      # a handler: returns at once
            self.turn = WatchedProcess.start(argv, on_exit=self.actor_ref.tell, owner=self)

        def on_receive(self, message):                 # the exit arrives as a message
            if isinstance(message, ProcessExited): ...

        def on_stop(self):
            if self.turn: self.turn.terminate(grace_seconds=3.0)

The process gets its own process group and the actor registers it, so a supervisor that
must kill the actor (missed deadline, hard stop) kills the whole group.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from supervisors.actor import SupervisedActor


@dataclass(frozen=True)
class ProcessExited:
    """Told to the owner when the watched process ended."""

    pid: int
    returncode: int


class WatchedProcess:
    def __init__(self, popen: subprocess.Popen[Any], owner: SupervisedActor | None) -> None:
        self.popen = popen
        self.pgid = popen.pid  # start_new_session: the child leads its own group
        self.exited = threading.Event()
        self._owner = owner

    @classmethod
    def start(
        cls,
        argv: Sequence[str],
        *,
        on_exit: Callable[[ProcessExited], Any] | None = None,
        owner: SupervisedActor | None = None,
        **popen_kwargs: Any,
    ) -> WatchedProcess:
        """Start ``argv`` in a new session (its own process group); ``on_exit`` is called
        from the watcher thread with a ``ProcessExited`` (``actor_ref.tell`` fits)."""
        popen = subprocess.Popen(list(argv), start_new_session=True, **popen_kwargs)
        watched = cls(popen, owner)
        if owner is not None:
            owner.add_process_group(watched.pgid)

        def watch() -> None:
            returncode = popen.wait()
            if owner is not None:
                owner.discard_process_group(watched.pgid)
            watched.exited.set()
            if on_exit is not None:
                on_exit(ProcessExited(popen.pid, returncode))

        threading.Thread(target=watch, name=f"watch-{popen.pid}", daemon=True).start()
        return watched

    def terminate(self, grace_seconds: float = 3.0) -> bool:
        """SIGTERM to the group, up to ``grace_seconds``, then SIGKILL to the group. Returns
        whether it ended within the grace. Safe after the process ended."""
        self._signal(signal.SIGTERM)
        if self.exited.wait(grace_seconds):
            return True
        self.kill()
        self.exited.wait(grace_seconds)
        return False

    def kill(self) -> None:
        self._signal(signal.SIGKILL)

    def _signal(self, signum: int) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.pgid, signum)
