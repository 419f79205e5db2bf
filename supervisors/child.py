"""A running child as its supervisor sees it, whatever it is, and the one way to stop it.

Two kinds of child: an actor (``SupervisedActor`` behind its ``ActorRef``) and a nested
supervisor (a ``Nested``: ``supervisors.supervisor.Supervisor``, which this module does
not import). Both are seen through ``Running``: ask it to stop, wait for its exit, kill it.
"""

from __future__ import annotations

import contextlib
import enum
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pykka

from supervisors.actor import SupervisedActor
from supervisors.exit import ExitReason, ExitSignal
from supervisors.reports import Reporter
from supervisors.spec import BRUTAL_KILL, ChildSpec

log = logging.getLogger("supervisors")

KILL_WAIT_SECONDS = 1.0
"""After a kill, how long to wait for the child to exit before abandoning it (a thread
whose process group died usually notices within this)."""


class StartError(RuntimeError):
    """A child could not be started (its factory raised, returned something that is not a
    child, or its ``on_start`` raised)."""

    def __init__(self, child_id: str, reason: ExitReason) -> None:
        super().__init__(f"child {child_id!r} failed to start: {reason}")
        self.child_id = child_id
        self.reason = reason


class SupervisorStopped(RuntimeError):
    """The supervisor is not running (not started yet, or already stopped)."""


class Nested:
    """A supervisor as a child of another: started by ``start`` below, stopped and killed
    through ``Running``. ``supervisors.supervisor.Supervisor`` is the one kind."""

    exit_signal: ExitSignal
    reporter: Reporter

    def start(self) -> Nested:
        """Start every child; raise ``StartError``, or ``SupervisorStopped`` when used."""
        raise NotImplementedError


class Running:
    """One started child: ``exit`` fires once with its reason."""

    def __init__(self, target: Any, exit_signal: ExitSignal) -> None:
        self.target = target
        self.exit = exit_signal

    def request_stop(self) -> None:
        raise NotImplementedError

    def kill(self) -> None:
        raise NotImplementedError


class _ActorRunning(Running):
    def __init__(self, ref: pykka.ActorRef[Any], actor: SupervisedActor) -> None:
        super().__init__(ref, actor.supervisor_exit)
        self._actor = actor

    def request_stop(self) -> None:
        with contextlib.suppress(pykka.ActorDeadError):  # it died meanwhile: nothing to ask
            self.target.stop(block=False)

    def kill(self) -> None:
        try:
            self._actor.on_kill()
        except Exception:
            log.exception("on_kill raised", extra={"event": "kill_failed"})


class _SupervisorRunning(Running):
    def request_stop(self) -> None:
        self.target.stop(block=False)

    def kill(self) -> None:
        self.target.kill(ExitReason(False, "killed by its supervisor"))


def start(spec: ChildSpec, args: tuple[Any, ...], adopt: Callable[[Nested], None]) -> Running:
    """Call the spec's factory and wait until the child has started (its ``on_start``
    returned, or a nested supervisor started its own children). Raise ``StartError``."""
    try:
        made = spec.start(*args)
    except Exception as exc:
        raise StartError(spec.id, ExitReason.crash(exc)) from exc
    if isinstance(made, Nested):
        adopt(made)
        try:
            made.start()
        except StartError as exc:
            raise StartError(spec.id, exc.reason) from exc
        except SupervisorStopped as exc:  # the factory handed back a used supervisor
            why = ExitReason(False, f"factory must make a new one: {exc}")
            raise StartError(spec.id, why) from exc
        return _SupervisorRunning(made, made.exit_signal)
    actor = _actor_of(made)
    if actor is None:
        made_type = type(made).__name__
        if isinstance(made, pykka.ActorRef):
            made.stop(block=False)
            made_type = f"ActorRef of {made.actor_class.__name__}"
        reason = ExitReason(
            False, f"factory returned {made_type}; expected a SupervisedActor's ref or a Supervisor"
        )
        raise StartError(spec.id, reason)
    actor.supervisor_started.wait()
    if not actor.supervisor_start_ok:
        actor.supervisor_exit.wait()
        raise StartError(spec.id, actor.supervisor_exit.reason or ExitReason(False, "died"))
    return _ActorRunning(made, actor)


def _actor_of(made: Any) -> SupervisedActor | None:
    if not isinstance(made, pykka.ActorRef):
        return None
    return SupervisedActor.of(made)


class StopOutcome(enum.StrEnum):
    """How one shutdown step ended (its value is the report's ``outcome`` field)."""

    STOPPED = "stopped"  # exited in time
    KILLED = "killed"  # exited after the kill
    ABANDONED = "abandoned"  # still running: a thread cannot be killed
    ALREADY = "already"  # had exited before the step


@dataclass(frozen=True)
class Stopped:
    """How one shutdown step ended, how long it took, and the child's exit reason."""

    outcome: StopOutcome
    seconds: float
    reason: ExitReason | None


def stop(running: Running, spec: ChildSpec) -> Stopped:
    """Stop one child by its spec's shutdown; bounded unless the spec says INFINITY."""
    began = time.monotonic()
    if running.exit.is_set():
        return Stopped(StopOutcome.ALREADY, 0.0, running.exit.reason)
    if spec.shutdown is BRUTAL_KILL:
        running.kill()
        running.request_stop()
        outcome = _after_kill(running)
        return Stopped(outcome, time.monotonic() - began, running.exit.reason)
    running.request_stop()
    timeout = spec.shutdown_seconds
    if running.exit.wait(None if timeout == float("inf") else timeout):
        return Stopped(StopOutcome.STOPPED, time.monotonic() - began, running.exit.reason)
    running.kill()
    outcome = _after_kill(running)
    return Stopped(outcome, time.monotonic() - began, running.exit.reason)


def _after_kill(running: Running) -> StopOutcome:
    if running.exit.wait(KILL_WAIT_SECONDS):
        return StopOutcome.KILLED
    return StopOutcome.ABANDONED
