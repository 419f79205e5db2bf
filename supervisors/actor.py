"""``SupervisedActor``: a pykka ``ThreadingActor`` whose death its supervisor learns, with
the reason.

pykka 4 funnels every unhandled exception through ``Actor._handle_failure``. That covers
``on_start``, ``on_receive`` of a ``tell``, ``on_stop`` and ``on_failure``. It runs the
whole life in ``Actor._actor_loop``. This class hooks those two, so the exit is reported
once, after the actor's thread has answered every waiting caller. pykka is pinned below
5, and ``tests/unit/supervisors/test_actor.py`` checks that the hooks still exist.
"""

from __future__ import annotations

import signal
import threading
import weakref
from types import TracebackType
from typing import Any, ClassVar

import pykka

from supervisors.exit import NORMAL, ExitReason, ExitSignal
from supervisors.groups import signal_group
from supervisors.registry import Registry


class SupervisedActor(pykka.ThreadingActor):
    """Base class for an actor that a ``Supervisor`` starts.

    Lifecycle (pykka's hooks, unchanged):

    - ``on_start()`` runs in the actor's thread before any message. Its supervisor waits
      for it to return before starting the next sibling. A raise is an abnormal exit.
      During the supervisor's own start it fails that start; later it counts as a crash.
    - ``on_receive()`` and proxy calls run one at a time. A raise while answering an
      ``ask`` goes back to the caller. A raise in a ``tell`` is a crash, an abnormal exit.
    - ``on_stop()`` runs in the actor's thread after a requested stop. A raise makes the
      exit abnormal.
    - ``on_failure()`` runs after a crash in a ``tell``. A raise is logged.
    - ``on_kill()`` runs in the *supervisor's* thread when the actor missed its stop
      deadline, or on a hard stop. It must be quick and thread-safe. A raise is logged.

    Stopping twice is safe; pykka answers ``False`` the second time. Callers waiting on an
    ``ask`` when the actor dies get ``pykka.ActorDeadError``.

    An actor given a name (``register_as``) holds it in its ``Registry`` from before
    ``on_start`` until its exit, whatever the reason. Messages told meanwhile wait in its
    inbox. A name held by another live actor makes the start fail.

    Never run long work inside a handler, because a stop request queues behind it. Start
    the work in a subprocess (``supervisors.work.WatchedProcess``) or a thread, and answer
    messages while it runs. Register its process group with ``add_process_group`` so
    that a kill reaches it.
    """

    _by_urn: ClassVar[weakref.WeakValueDictionary[str, SupervisedActor]] = (
        weakref.WeakValueDictionary()
    )

    @classmethod
    def of(cls, ref: pykka.ActorRef[Any]) -> SupervisedActor | None:
        """The actor behind ``ref`` if it is a ``SupervisedActor`` still referenced."""
        return SupervisedActor._by_urn.get(ref.actor_urn)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        SupervisedActor._by_urn[self.actor_urn] = self
        self.supervisor_started = threading.Event()  # set when on_start ended, either way
        self.supervisor_start_ok = False  # on_start returned without raising
        self.supervisor_exit = ExitSignal()
        self._failure: BaseException | None = None
        self._process_groups: set[int] = set()
        self._groups_lock = threading.Lock()
        self._name: tuple[Registry, str] | None = None

    def register_as(self, registry: Registry, name: str) -> None:
        """Hold ``name`` in ``registry`` while this actor lives (call it in ``__init__``)."""
        self._name = (registry, name)

    # --- process groups: what a kill reaches -------------------------------------------

    def add_process_group(self, pgid: int) -> None:
        """Declare a process group that ``on_kill`` should SIGKILL (thread-safe)."""
        with self._groups_lock:
            self._process_groups.add(pgid)

    def discard_process_group(self, pgid: int) -> None:
        with self._groups_lock:
            self._process_groups.discard(pgid)

    def on_kill(self) -> None:
        """Kill what this actor declared: SIGKILL to each registered process group.

        It runs in the supervisor's thread, since the actor's own thread may be stuck.
        Override it to kill other things. Call ``super().on_kill()`` to keep killing the
        process groups."""
        with self._groups_lock:
            groups = list(self._process_groups)
        for pgid in groups:
            signal_group(pgid, signal.SIGKILL)

    # --- pykka hooks ----------------------------------------------------------------

    def _handle_failure(
        self,
        exception_type: type[BaseException] | None,
        exception_value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._failure is None and exception_value is not None:
            self._failure = exception_value
        super()._handle_failure(exception_type, exception_value, traceback)

    def _actor_loop(self) -> None:
        reason: ExitReason = NORMAL
        try:
            if self._name is not None:
                self._name[0].register(self._name[1], self.actor_ref)
            self._actor_loop_setup()
            self.supervisor_start_ok = not self.actor_stopped.is_set()
            self.supervisor_started.set()
            self._actor_loop_running()
            self._actor_loop_teardown()
        except BaseException as exc:
            self._failure = self._failure or exc
        finally:
            if self._failure is not None:
                reason = ExitReason.crash(self._failure)
            # A message put while the first teardown ran would wait forever: answer it too.
            try:
                self._actor_loop_teardown()
            finally:
                if self._name is not None:
                    self._name[0].unregister(self._name[1], self.actor_ref)
                self.supervisor_exit.set(reason)
                self.supervisor_started.set()
