"""supervisors: OTP-style supervision trees on pykka. pykka has actors but no
supervision.

The package is generic. It never imports the application that uses it.

A tree is supervisors and workers. A worker is a ``SupervisedActor`` (a pykka
``ThreadingActor``). A supervisor is a ``Supervisor`` or a ``Pool``. It declares its
children as ``ChildSpec`` s and does nothing else::

    root = Supervisor("app", [
        ChildSpec("http", HttpActor.start, shutdown=5.0),
        ChildSpec("workers", lambda: Pool("workers", ChildSpec("w", Worker.start,
                  restart=Restart.TEMPORARY)), kind=ChildKind.SUPERVISOR),
    ], strategy=Strategy.REST_FOR_ONE)
    run_main(root)          # SIGTERM: drain hooks, then ordered stop, exit 0

The lifecycle contract holds for every child. It is written once, here.

- Start. Children start in order, each after the previous one's ``on_start`` returned.
  A failure during the supervisor's own start stops what started, in reverse order, and
  raises ``StartError``. A failure while restarting counts as a crash.
- Exit. An actor exits normally after a requested stop or ``self.stop()``. An exception
  in ``on_start``, in a ``tell`` handler or in ``on_stop`` is an abnormal exit, reported
  with the exception. A caller waiting on an ``ask`` of an actor that died gets
  ``pykka.ActorDeadError``. A call into a stopped supervisor raises
  ``SupervisorStopped``.
- Restart. A permanent child is always restarted, a transient one after an abnormal
  exit, a temporary one never. A temporary child taken down by a sibling's death is
  forgotten. More than ``intensity`` restarts in ``period_seconds`` (default 1 in 5 s)
  stop the supervisor. It stops its children in reverse order and exits abnormally, so
  its parent decides. At the root, ``wait()`` returns that reason and ``run_main`` exits
  non-zero.
- Stop. ``stop()`` is safe twice and before ``start()``. Children stop in reverse start
  order; a pool's stop in parallel. Each stops as its spec says. BRUTAL_KILL calls the
  kill hook and does not wait. A timeout asks, calls the kill hook once it passes, and
  abandons and reports a child still running. INFINITY waits; it is the default for a
  supervisor child. ``kill()`` is the hard stop.

Long work never runs inside a message handler. A pykka stop is a message queued behind
the one being handled, and a Python thread cannot be killed. Run long work in a worker
thread, or in a subprocess in its own process group (``WatchedProcess``, whose exit
comes as a ``ProcessExited``). Answer messages while it runs. Register the process group
(``add_process_group``) so a kill reaches it. Every group signal and stop goes through
``supervisors.groups`` (``signal_group``, ``stop_group``).

Names. An actor given a name (``register_as``) is found in a ``Registry`` while it lives.
``registry.tell(name, message)`` reaches whichever actor holds the name now. When none
does, the message is dropped and logged at debug, as OTP's cast to a dead name.

Reports. The logger ``supervisors`` carries fields in ``extra=``: event, supervisor,
child, reason, and by event kind restart, normal, outcome, seconds and phase.
``Supervisor.stats()`` keeps counters, and an ``on_event`` hook hears each event.
"""

from supervisors.actor import SupervisedActor
from supervisors.child import KILL_WAIT_SECONDS, StartError, StopOutcome, Stopped, SupervisorStopped
from supervisors.exit import NORMAL, ExitReason
from supervisors.groups import GroupStop, OwnGroupError, signal_group, stop_group
from supervisors.intensity import RestartIntensity
from supervisors.pool import Pool
from supervisors.registry import Mailbox, NameTaken, Registry
from supervisors.reports import Event
from supervisors.signals import SignalBridge, exit_code, run, run_main
from supervisors.spec import (
    BRUTAL_KILL,
    DEFAULT_WORKER_SHUTDOWN_SECONDS,
    INFINITY,
    ChildKind,
    ChildSpec,
    Restart,
    SpecError,
)
from supervisors.strategies import Strategy
from supervisors.supervisor import (
    ChildCounts,
    ChildInfo,
    NoSuchChild,
    Supervisor,
)
from supervisors.work import ProcessExited, WatchedProcess

__all__ = [
    "BRUTAL_KILL",
    "DEFAULT_WORKER_SHUTDOWN_SECONDS",
    "INFINITY",
    "KILL_WAIT_SECONDS",
    "NORMAL",
    "ChildCounts",
    "ChildInfo",
    "ChildKind",
    "ChildSpec",
    "Event",
    "ExitReason",
    "GroupStop",
    "Mailbox",
    "NameTaken",
    "NoSuchChild",
    "OwnGroupError",
    "Pool",
    "ProcessExited",
    "Registry",
    "Restart",
    "RestartIntensity",
    "SignalBridge",
    "SpecError",
    "StartError",
    "StopOutcome",
    "Stopped",
    "Strategy",
    "SupervisedActor",
    "Supervisor",
    "SupervisorStopped",
    "WatchedProcess",
    "exit_code",
    "run",
    "run_main",
    "signal_group",
    "stop_group",
]
