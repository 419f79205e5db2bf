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
must kill the actor (missed deadline, hard stop) kills the whole group. Every signal goes
through ``supervisors.groups``, the one place that signals and stops a group.
"""

from __future__ import annotations

import signal
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from supervisors.actor import SupervisedActor
from supervisors.groups import GroupStop, group_empty, signal_group, stop_group


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

    def signal(self, signum: int) -> bool:
        """Send ``signum`` to the whole group; False when the group is gone."""
        return signal_group(self.pgid, signum)

    def ended(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for the process to exit and its group to empty."""
        deadline = time.monotonic() + timeout
        if not self.exited.wait(timeout):
            return False
        return group_empty(self.pgid, max(0.0, deadline - time.monotonic()))

    def terminate(self, grace_seconds: float = 3.0, kill_lands_seconds: float = 3.0) -> GroupStop:
        """SIGTERM to the group, up to ``grace_seconds``, then SIGKILL to the group and up
        to ``kill_lands_seconds``. Safe after the process ended (``GroupStop.ENDED``)."""
        if self.ended(0):
            return GroupStop.ENDED
        return stop_group(
            self.pgid,
            grace_seconds=grace_seconds,
            kill_lands_seconds=kill_lands_seconds,
            ended=self.ended,
        )

    def kill(self) -> None:
        """SIGKILL to the whole group now, without waiting."""
        signal_group(self.pgid, signal.SIGKILL)
