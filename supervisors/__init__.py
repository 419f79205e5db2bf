"""supervisors: OTP-style supervision trees on pykka (which has actors but no supervision).

Generic: it never imports the application that uses it.

A tree is supervisors and workers. A worker is a ``SupervisedActor`` (a pykka
``ThreadingActor``); a supervisor is a ``Supervisor`` (or a ``Pool``) that declares its
children as ``ChildSpec`` s and does nothing else::

    root = Supervisor("app", [
        ChildSpec("http", HttpActor.start, shutdown=5.0),
        ChildSpec("workers", lambda: Pool("workers", ChildSpec("w", Worker.start,
                  restart=Restart.TEMPORARY)), kind=ChildKind.SUPERVISOR),
    ], strategy=Strategy.REST_FOR_ONE)
    run_main(root)          # SIGTERM: drain hooks, then ordered stop, exit 0

Lifecycle contract, for every child (written once, here):

- start: children start in order, each after the previous one's ``on_start`` returned. A
  failure during the supervisor's own start stops what started (reverse order) and raises
  ``StartError``; a failure while restarting counts as a crash.
- exit: an actor exits normally after a requested stop or ``self.stop()``; an exception in
  ``on_start``, in a ``tell`` handler or in ``on_stop`` is an abnormal exit, reported with
  the exception. Callers waiting on an ``ask`` of an actor that died get
  ``pykka.ActorDeadError``; calls into a stopped supervisor raise ``SupervisorStopped``.
- restart: permanent always, transient after an abnormal exit, temporary never (not even
  when a sibling's death takes it down: it is then forgotten). More than ``intensity``
  restarts in ``period_seconds`` (default 1 in 5 s): the supervisor stops its children
  in reverse order and exits abnormally, so its parent decides; at the root, ``wait()``
  returns that reason and ``run_main`` exits non-zero.
- stop: ``stop()`` is safe twice and before ``start()``. Children stop in reverse start
  order (a pool's in parallel), each by its spec: BRUTAL_KILL (kill hook, no wait), a
  timeout (ask; past it, kill hook; still running: abandoned and reported), or INFINITY
  (the default for a supervisor child). ``kill()`` is the hard stop.

Long work never runs inside a message handler: a pykka stop is a message queued behind
the one being handled, and a Python thread cannot be killed. Run it in a subprocess in
its own process group (``WatchedProcess``, whose exit comes as a ``ProcessExited``) or a
worker thread, answer messages while it runs, and register the process group
(``add_process_group``) so a kill reaches it. Every group signal and stop goes through
``supervisors.groups`` (``signal_group``, ``stop_group``).

Names: an actor given a name (``register_as``) is found in a ``Registry`` while it lives;
``registry.tell(name, message)`` reaches whichever actor holds the name now, and drops
the message (logged at debug) when none does, as OTP's cast to a dead name.

Reports: logger ``supervisors`` (fields in ``extra=``: event, supervisor, child, reason,
and by event kind, restart, normal, outcome, seconds, phase), ``Supervisor.stats()``
counters, and an ``on_event`` hook.
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
