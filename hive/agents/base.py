"""What every turn shares: its context, its ending, and the stop sequence (RULES 2).

Lifecycle of a `Turn` (a handle on a turn that has already started):
- `begin()` lets the transcript flow to `on_line` (start_turn calls it unless asked not
  to, so a caller can write its ledger row first). Until then the agent runs and its
  output waits in the pipe; the turn cannot end before `begin()` or `stop()`.
- `ctx.on_line` should return quickly (hand the line to a queue): the agent's output
  waits behind it, and so does the turn's end.
- `wait(timeout)` answers whether the turn has ended; `ending` then says how, and
  `ctx.on_end(ending)` has been called once, from the turn's own thread.
- `stop(reason)` aborts (SIGTERM to the group, or the `stopping` event for a thread),
  waits the grace, then escalates: SIGKILL to the whole group, or, for a thread that
  cannot be killed, abandonment. It returns within LANE_FREE_MS, True once the turn has
  ended and its slot is free; False when it has not ended by then: abandoned (it still
  holds its slot and counts as in flight), or its end waits behind a stuck `on_line`.
  Stopping twice, concurrently or after the end, is safe. The first reason is kept.
- `request_stop(reason)` is the same stop run on a thread of its own, returning at
  once: for an actor, whose message handler must not block; `on_end` tells it the end.
- A turn past `ctx.turn_max_seconds` is stopped the same way by its own timer, with
  the reason REASON_BOUND and the variable that bounds it (`ctx.bound_name`).

Outcome precedence: a turn we stopped before it ended is STOPPED (whatever its exit);
else a turn that reported a provider refusal is REFUSED; else exit 0 is FINISHED, a
non-zero exit ENDED_BADLY, and death by a signal we did not send ENDED_UNEXPECTEDLY.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from hive.agents.conversation import Conversation
from hive.agents.launch import Launch
from hive.agents.protocol import Usage
from hive.agents.stopping import KILL_LANDS_MS, LANE_FREE_MS, TURN_STOP_GRACE_MS
from hive.agents.transcript import OnLine, Transcript
from hive.errors import HiveError

# re-exported: the adapters name a turn's outcomes from here
from hive.rules.states import TurnOutcome as TurnOutcome
from hive.rules.turn_stop import ESC_ABANDON, ESC_KILL_GROUP, escalation

FINISHED = TurnOutcome.FINISHED
ENDED_BADLY = TurnOutcome.ENDED_BADLY
ENDED_UNEXPECTEDLY = TurnOutcome.ENDED_UNEXPECTEDLY
STOPPED = TurnOutcome.STOPPED
REFUSED = TurnOutcome.REFUSED
OUTCOMES = tuple(TurnOutcome)

# a turn stopped by its own timer: this, then the variable that bounds it (`bound_name`)
REASON_BOUND = "past its bound"

log = logging.getLogger("hive.agents")


class TurnStartError(HiveError):
    """The turn could not start; `str()` is one line that says why."""


def _discard_line(kind: str, text: str) -> None:
    pass


@dataclass(frozen=True)
class Ending:
    """How a turn ended. `seconds` from start to end; `exit_code` for a process that
    exited, `signal` for one a signal killed; `stop_reason` when we stopped it; `refusal`
    and `usage` as the agent reported them; `error` for a callable that raised."""

    outcome: TurnOutcome
    seconds: float
    exit_code: int | None = None
    signal: int | None = None
    stop_reason: str | None = None
    refusal: str | None = None
    usage: Usage | None = None
    error: str | None = None
    # when the provider said the refused key works again (None: not said)
    resets_at: datetime | None = None

    @property
    def at_bound(self) -> bool:
        """Stopped by its own timer, past HIVE_TURN_MAX_SECONDS (or a review's bound)."""
        return self.stop_reason is not None and self.stop_reason.startswith(REASON_BOUND)


@dataclass(frozen=True)
class Report:
    """What a `python:` agent may return instead of None/True/False."""

    ok: bool = True
    refusal: str | None = None
    usage: Usage | None = None
    resets_at: datetime | None = None  # with a refusal: when the key works again


@dataclass(frozen=True)
class TurnContext:
    """Everything a turn needs. `key` is the credential itself: never printed (repr=False);
    a command agent gets it in the variable named `key_env`, and no variable when empty."""

    issue: int
    title: str
    body: str
    branch: str
    boundary: tuple[str, ...]
    brief: str
    worktree: Path
    key_env: str = "HIVE_KEY"
    key: str = field(default="", repr=False)
    turn_max_seconds: float = 3600.0
    bound_name: str = "HIVE_TURN_MAX_SECONDS"  # the variable the bound is, for its sentence
    on_line: OnLine = _discard_line
    on_end: Callable[[Ending], None] | None = None
    stopping: threading.Event = field(default_factory=threading.Event, compare=False)
    stop_grace_ms: int = TURN_STOP_GRACE_MS
    launch: Launch = field(default_factory=Launch)
    # the earlier attempt's conversation, for an agent that resumes one
    resume: Conversation | None = None

    def __post_init__(self) -> None:
        # a caller's str path or list of paths is taken as meant (frozen: set once, here)
        object.__setattr__(self, "worktree", Path(self.worktree))
        object.__setattr__(self, "boundary", tuple(self.boundary))
        if not self.turn_max_seconds > 0:
            raise TurnStartError(f"turn bound {self.turn_max_seconds!r} s: expected above 0")
        if not 0 <= self.stop_grace_ms <= LANE_FREE_MS - KILL_LANDS_MS:
            raise TurnStartError(
                f"stop grace {self.stop_grace_ms} ms: expected 0 to "
                f"{LANE_FREE_MS - KILL_LANDS_MS} (grace + kill lands <= lane free)"
            )


class Turn:
    """A started turn. Subclasses start the agent in __init__, then call `_started()`,
    and call `_finish()` exactly once when it has ended."""

    kill_stops_it = False  # RULES 2 escalation(): True for a process group, False for a thread
    pid: int | None = None
    pgid: int | None = None
    # the conversation to carry to the next attempt, once the turn ended (claude, codex)
    conversation: Conversation | None = None

    def __init__(self, ctx: TurnContext) -> None:
        self.ctx = ctx
        self.started_monotonic = time.monotonic()
        self.abandoned = False
        self._begun = threading.Event()
        self._ended = threading.Event()
        self._lock = threading.Lock()  # guards the fields below
        self._stop_lock = threading.Lock()  # one stopper at a time
        self._stop_reason: str | None = None
        self._exit_seen = False
        self._refusal: str | None = None
        self._resets_at: datetime | None = None
        self._usage: Usage | None = None
        self._ending: Ending | None = None
        self.transcript = Transcript(ctx.on_line, self._begun, ctx.issue, ctx.key)
        bound = f"{REASON_BOUND} ({ctx.bound_name})"
        self._bound = threading.Timer(ctx.turn_max_seconds, self.stop, args=(bound,))
        self._bound.daemon = True

    # ---- the public handle -------------------------------------------------------

    def begin(self) -> None:
        """Let the transcript flow to `on_line` (idempotent)."""
        self._begun.set()

    @property
    def ended(self) -> bool:
        return self._ended.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait up to `timeout` seconds (None: for ever); True once the turn has ended."""
        return self._ended.wait(timeout)

    @property
    def ending(self) -> Ending | None:
        return self._ending

    @property
    def outcome(self) -> TurnOutcome | None:
        return self._ending.outcome if self._ending else None

    @property
    def refusal(self) -> str | None:
        """The last provider refusal reported so far (live, before the end too)."""
        return self._refusal

    @property
    def usage(self) -> Usage | None:
        """Provider usage reported so far, if any."""
        return self._usage

    def request_stop(self, reason: str) -> None:
        """Start `stop(reason)` on its own thread and return at once."""
        threading.Thread(
            target=self.stop, args=(reason,), name=f"hive-stop-{self.ctx.issue}", daemon=True
        ).start()

    def stop(self, reason: str) -> bool:
        """Abort, grace, escalate (see the module docstring); True once ended."""
        self._begun.set()
        if self._ended.is_set():
            return True
        if not self._stop_lock.acquire(timeout=LANE_FREE_MS / 1000):
            return self._ended.is_set()
        try:
            if self._ended.is_set() or self.abandoned:
                return self._ended.is_set()
            with self._lock:
                if self._stop_reason is None and not self._exit_seen:
                    self._stop_reason = reason
            self.ctx.stopping.set()
            self.transcript.note(f"stopping: {reason}", patient=False)
            return self._stop_sequence()
        finally:
            self._stop_lock.release()

    # ---- for the adapters ----------------------------------------------------------

    def _stop_sequence(self) -> bool:
        """Abort, wait the grace, escalate; True once the turn has ended. A turn that is
        a process group replaces this with the group stop (hive.agents.stopping)."""
        self._abort()
        self._ended.wait(self.ctx.stop_grace_ms / 1000)
        step = escalation(self.kill_stops_it, self._ended.is_set())
        if step == ESC_KILL_GROUP:
            self._kill_group()
            return self._ended.wait(KILL_LANDS_MS / 1000)
        if step == ESC_ABANDON:
            self._abandon()
        return self._ended.is_set()

    def _abort(self) -> None:
        """Ask the agent to stop (the `stopping` event is already set)."""

    def _kill_group(self) -> None:
        """The grace is over: SIGKILL to the whole group (a turn that is a process)."""
        raise NotImplementedError

    def _abandon(self) -> None:
        """The grace is over and the turn cannot be killed: it holds its slot until it ends."""
        self.abandoned = True
        self.transcript.note(
            "abandoned: a thread cannot be killed; it holds its slot until it returns",
            patient=False,
        )

    def _started(self) -> None:
        self._bound.start()

    def _saw_refusal(self, kind: str, resets_at: datetime | None = None) -> None:
        """The agent reported a refusal of `kind` (the last one wins, with its reset time:
        when the provider says the key works again, if it said)."""
        self._refusal = kind
        self._resets_at = resets_at

    def _saw_usage(self, usage: Usage) -> None:
        with self._lock:
            self._usage = usage if self._usage is None else self._usage.plus(usage)

    def _record_exit(self) -> str | None:
        """Record that the agent's own run is over; answer the stop reason, if we stopped it
        before that (a stop after this point does not change the outcome)."""
        with self._lock:
            self._exit_seen = True
            return self._stop_reason

    def _finish(
        self,
        natural: TurnOutcome,
        *,
        exit_code: int | None = None,
        signal: int | None = None,
        error: str | None = None,
    ) -> None:
        """The turn has ended; `natural` is the outcome its exit alone would give."""
        with self._lock:
            reason = self._stop_reason
        outcome = natural
        if reason is not None:
            outcome = STOPPED
        elif self._refusal is not None:
            outcome = REFUSED
        ending = Ending(
            outcome=outcome,
            seconds=time.monotonic() - self.started_monotonic,
            exit_code=exit_code,
            signal=signal,
            stop_reason=reason,
            refusal=self._refusal,
            usage=self._usage,
            error=error,
            resets_at=self._resets_at if self._refusal is not None else None,
        )
        self._bound.cancel()
        self.transcript.note(_ending_line(ending))
        self.transcript.close()
        self._ending = ending
        self._ended.set()
        if self.ctx.on_end is not None:
            try:
                self.ctx.on_end(ending)
            except Exception:
                log.exception("on_end raised", extra={"issue": self.ctx.issue})


def _ending_line(ending: Ending) -> str:
    how = [ending.outcome.value]
    if ending.exit_code is not None:
        how.append(f"exit {ending.exit_code}")
    if ending.signal is not None:
        how.append(f"signal {ending.signal}")
    if ending.stop_reason:
        how.append(f"because {ending.stop_reason}")
    if ending.refusal:
        how.append(f"refusal {ending.refusal}")
    return f"turn ended: {', '.join(how)} after {ending.seconds:.1f} s"
