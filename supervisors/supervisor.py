"""``Supervisor``. It starts its children in order, restarts them by its strategy within
its restart intensity, and stops them in reverse order.

Declare children, do no work::

    class Runner(Supervisor):
        strategy = Strategy.REST_FOR_ONE

        def child_specs(self) -> list[ChildSpec]:
            return [
                ChildSpec("bees", lambda: Pool("bees", bee_template), kind=ChildKind.SUPERVISOR),
                ChildSpec("claimer", RunnerActor.start, shutdown=5.0),
            ]

A supervisor is not a pykka actor. Stopping a child blocks up to its shutdown timeout,
and that must not sit in a message handler. A supervisor owns one thread and one event
queue. Every decision (restart, give up, stop) is taken in that thread, one event at a
time.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Self

from supervisors import child as children_
from supervisors import reports
from supervisors.child import Nested, SupervisorStopped
from supervisors.exit import ExitReason, ExitSignal
from supervisors.inbox import Answer, Call, ChildExited, Message, Phase, StopAll
from supervisors.intensity import DEFAULT_INTENSITY, DEFAULT_PERIOD_SECONDS, RestartIntensity
from supervisors.reports import EventHook, Reporter
from supervisors.spec import ChildKind, ChildSpec, Restart, check_unique_ids
from supervisors.strategies import Strategy, plan


class NoSuchChild(LookupError):
    """No child with that id."""


@dataclass(frozen=True)
class ChildInfo:
    """One row of ``which_children()``. ``target`` is the ActorRef or Supervisor, or
    ``None`` when the child is not running."""

    id: str
    kind: ChildKind
    restart: Restart
    running: bool
    target: Any


@dataclass(frozen=True)
class ChildCounts:
    specs: int
    active: int
    supervisors: int
    workers: int


@dataclass
class _Slot:
    spec: ChildSpec
    args: tuple[Any, ...]


class Supervisor(Nested):
    """A supervisor of children (see the module).

    Call ``start()`` once. It returns when every child started, or raises
    ``StartError`` after stopping those it started. Call ``stop()`` any number of times,
    also before ``start()``. ``kill()`` is the hard stop. ``wait()`` returns the exit
    reason."""

    strategy: ClassVar[Strategy] = Strategy.ONE_FOR_ONE
    intensity: ClassVar[int] = DEFAULT_INTENSITY
    period_seconds: ClassVar[float] = DEFAULT_PERIOD_SECONDS
    _parallel_shutdown: ClassVar[bool] = False

    def __init__(
        self,
        name: str,
        children: Sequence[ChildSpec] | None = None,
        *,
        strategy: Strategy | None = None,
        intensity: int | None = None,
        period_seconds: float | None = None,
        on_event: EventHook | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.name = name
        self._strategy = strategy or type(self).strategy
        self._intensity = RestartIntensity(
            type(self).intensity if intensity is None else intensity,
            type(self).period_seconds if period_seconds is None else period_seconds,
            clock,
        )
        specs = list(self.child_specs() if children is None else children)
        check_unique_ids(specs)
        self._slots: dict[str, _Slot] = {s.id: _Slot(s, s.args) for s in specs}
        self._running: dict[str, children_.Running] = {}
        self.reporter = Reporter(name, on_event)
        self.exit_signal = ExitSignal()
        self._lock = threading.RLock()
        self._events: queue.Queue[Message] = queue.Queue()
        self._state = Phase.NEW
        # a stop was asked: calls are refused from now on, not queued behind the stop
        self._stop_asked = False
        self._thread: threading.Thread | None = None
        self._started = threading.Event()
        self._start_error: children_.StartError | None = None

    def child_specs(self) -> Sequence[ChildSpec]:
        """Declare the children, in start order. Subclasses override this or pass
        ``children``. It is called once, in ``__init__``. A raise fails the construction."""
        return ()

    # --- lifecycle --------------------------------------------------------------------

    def start(self) -> Self:
        """Start the children in order, each after the previous one's ``on_start``
        returned. Raises ``StartError`` (with the first failure) or ``SupervisorStopped``."""
        with self._lock:
            if self._state is not Phase.NEW:
                raise SupervisorStopped(f"supervisor {self.name!r} cannot start twice")
            self._state = Phase.STARTING
            self._thread = threading.Thread(target=self._loop, name=f"sup-{self.name}", daemon=True)
            self._thread.start()
        self._started.wait()
        if self._start_error is not None:
            raise self._start_error
        return self

    def stop(
        self, reason: ExitReason | None = None, *, block: bool = True, timeout: float | None = None
    ) -> ExitReason | None:
        """Stop every child in reverse start order, then exit with ``reason``. The default
        reason is a normal shutdown. Safe twice and before start. Returns the exit reason,
        or ``None`` when not blocking or when the timeout passed."""
        reason = reason or ExitReason.shutdown()
        with self._lock:
            self._stop_asked = True
            if self._state is Phase.NEW:
                self._state = Phase.STOPPED
                self.exit_signal.set(reason)
            else:
                self._events.put(StopAll(reason))
        if block and threading.current_thread() is not self._thread:
            self.exit_signal.wait(timeout)
        return self.exit_signal.reason if block else None

    def kill(self, reason: ExitReason | None = None) -> None:
        """Hard stop, from any thread. It runs every descendant's kill hook (process groups)
        and exits at once with ``reason``. The ordered stop goes on behind, if it still
        can."""
        reason = reason or ExitReason(False, "hard stop")
        with self._lock:
            if self.exit_signal.is_set():
                return
            running = list(self._running.items())
        for _, child in reversed(running):
            child.kill()
        self.reporter.emit(reports.HARD_STOP, None, f"hard stop: {reason}", reason=str(reason))
        self.stop(reason, block=False)
        self.exit_signal.set(reason)

    def wait(self, timeout: float | None = None) -> ExitReason | None:
        """Block until the supervisor exited, and return its reason. ``None`` on timeout."""
        self.exit_signal.wait(timeout)
        return self.exit_signal.reason

    @property
    def alive(self) -> bool:
        live = self._state in (Phase.STARTING, Phase.RUNNING)
        return live and not self.exit_signal.is_set()

    # --- status -----------------------------------------------------------------------

    def which_children(self) -> list[ChildInfo]:
        with self._lock:
            rows = []
            for cid, slot in self._slots.items():
                child = self._running.get(cid)
                target = child.target if child is not None else None
                rows.append(
                    ChildInfo(cid, slot.spec.kind, slot.spec.restart, child is not None, target)
                )
            return rows

    def count_children(self) -> ChildCounts:
        rows = self.which_children()
        sups = sum(1 for r in rows if r.kind is ChildKind.SUPERVISOR)
        return ChildCounts(len(rows), sum(1 for r in rows if r.running), sups, len(rows) - sups)

    def stats(self) -> dict[str, int]:
        """Counts of this supervisor's events by name (``supervisors.reports``)."""
        return self.reporter.stats()

    # --- the supervisor's thread ------------------------------------------------------

    def _loop(self) -> None:
        reason: ExitReason = ExitReason(False, "supervisor crashed")
        try:
            reason = self._run()
        except BaseException as exc:
            reason = ExitReason(False, f"supervisor crashed: {exc!r}", exc)
            self._shutdown_all(reason)
            raise
        finally:
            with self._lock:
                self._state = Phase.STOPPED
                self.exit_signal.set(reason)
                self._started.set()
            self._answer_pending_calls()

    def _run(self) -> ExitReason:
        try:
            for cid in list(self._slots):
                if self.exit_signal.is_set():
                    break  # killed while starting: start nothing more
                self._start(cid, restart=False)
        except children_.StartError as exc:
            self._start_error = exc
            reason = ExitReason(False, str(exc), exc)
            self._shutdown_all(reason)
            return reason
        with self._lock:
            self._state = Phase.RUNNING
        self._started.set()
        while True:
            message = self._events.get()
            if isinstance(message, StopAll):
                self._shutdown_all(message.reason)
                return message.reason
            if isinstance(message, Call):
                try:
                    message.answer.put(Answer(True, message.fn()))
                except BaseException as exc:
                    message.answer.put(Answer(False, exc))
                continue
            if self.exit_signal.is_set():
                continue  # killed: no more restarts
            gave_up = self._on_exit(message.child_id, message.running, message.reason)
            if gave_up is not None:
                return gave_up

    def _start(self, cid: str, *, restart: bool) -> None:
        slot = self._slots[cid]
        try:
            running = children_.start(slot.spec, slot.args, self._adopt)
        except children_.StartError as exc:
            self.reporter.emit(
                reports.CHILD_START_FAILED,
                cid,
                f"child {cid} failed to start: {exc.reason}",
                reason=str(exc.reason),
            )
            raise
        with self._lock:
            self._running[cid] = running
        running.exit.add_callback(lambda why: self._events.put(ChildExited(cid, running, why)))
        name = reports.CHILD_RESTARTED if restart else reports.CHILD_STARTED
        verb = "restarted" if restart else "started"
        self.reporter.emit(
            name,
            cid,
            f"{verb} child {cid}",
            kind=slot.spec.kind.value,
            restart=slot.spec.restart.value,
        )

    def _adopt(self, child: Nested) -> None:
        if child.reporter.hook is None:
            child.reporter.hook = self.reporter.hook

    def _on_exit(
        self, cid: str, running: children_.Running | None, why: ExitReason
    ) -> ExitReason | None:
        """One child exited (``running`` is None for a failed restart). Returns the reason
        to exit with when the supervisor gives up."""
        with self._lock:
            if running is not None and self._running.get(cid) is not running:
                return None  # a child we stopped ourselves, or replaced since
            self._running.pop(cid, None)
            slot = self._slots.get(cid)
        if slot is None:
            return None  # terminated and forgotten meanwhile
        if running is not None:
            self.reporter.emit(
                reports.CHILD_EXITED,
                cid,
                f"child {cid} exited: {why}",
                reason=str(why),
                normal=why.normal,
            )
        restart = slot.spec.restart
        if restart is Restart.TEMPORARY or (restart is Restart.TRANSIENT and why.normal):
            if restart is Restart.TEMPORARY:
                with self._lock:
                    self._slots.pop(cid, None)
            return None
        if not self._intensity.allow():
            give_up = ExitReason(
                False,
                f"{self.name} gave up: more than {self._intensity.intensity} restarts in "
                f"{self._intensity.period_seconds:g}s; last: {cid} exited with {why}",
            )
            self.reporter.emit(reports.GAVE_UP, cid, str(give_up), reason=str(why))
            self._shutdown_all(give_up)
            return give_up
        todo = plan(self._strategy, list(self._slots), cid)
        for sibling in todo.stop:
            self._stop_one(sibling, phase="restart")
            if self._slots[sibling].spec.restart is Restart.TEMPORARY:
                with self._lock:
                    self._slots.pop(sibling, None)
        for cid_ in todo.start:
            if cid_ not in self._slots or cid_ in self._running:
                continue
            try:
                self._start(cid_, restart=True)
            except children_.StartError as exc:
                # Retried through the same path, so it counts against the intensity.
                self._events.put(ChildExited(cid_, None, exc.reason))
                break
        return None

    def _stop_one(self, cid: str, *, phase: str) -> None:
        with self._lock:
            running = self._running.pop(cid, None)
            spec = self._slots[cid].spec
        if running is None:
            return
        self._report_stop(cid, children_.stop(running, spec), phase)

    def _report_stop(self, cid: str, done: children_.Stopped, phase: str) -> None:
        self.reporter.emit(
            reports.SHUTDOWN_STEP,
            cid,
            f"stopped child {cid}: {done.outcome} in {done.seconds:.3f}s",
            outcome=done.outcome.value,
            seconds=round(done.seconds, 3),
            phase=phase,
            reason=str(done.reason) if done.reason else None,
        )

    def _shutdown_all(self, reason: ExitReason) -> None:
        with self._lock:
            self._state = Phase.STOPPING
            order = [cid for cid in reversed(self._slots) if cid in self._running]
        if self._parallel_shutdown:
            threads = [
                threading.Thread(target=self._stop_one, args=(cid,), kwargs={"phase": "shutdown"})
                for cid in order
            ]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
        else:
            for cid in order:
                self._stop_one(cid, phase="shutdown")
        self.reporter.emit(
            reports.SUPERVISOR_STOPPED,
            None,
            f"stopped: {reason}",
            reason=str(reason),
            normal=reason.normal,
        )

    # --- calls into the supervisor's thread ---------------------------------------------

    def _call(self, fn: Callable[[], Any]) -> Any:
        if threading.current_thread() is self._thread:
            return fn()  # a hook running in our own thread: queueing would deadlock
        answer: queue.Queue[Answer] = queue.Queue(1)
        with self._lock:
            # once a stop is asked a call fails at once: queued behind the stop it would
            # wait for every child's shutdown, only to fail then
            stopped = self._stop_asked or self.exit_signal.is_set()
            if stopped or self._state not in (Phase.RUNNING, Phase.STARTING):
                raise SupervisorStopped(f"supervisor {self.name!r} is not running")
            self._events.put(Call(fn, answer))
        got = answer.get()
        if not got.ok:
            raise got.value
        return got.value

    def _answer_pending_calls(self) -> None:
        while True:
            try:
                event = self._events.get_nowait()
            except queue.Empty:
                return
            if isinstance(event, Call):
                stopped = SupervisorStopped(f"supervisor {self.name!r} stopped")
                event.answer.put(Answer(False, stopped))
