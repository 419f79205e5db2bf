"""`python:<module>:<callable>`: the agent is a function, called with the TurnContext in
a worker thread (for embedding the hive and for tests).

The callable decides its outcome: returning None or True is `finished`, False is
`ended badly`, a `Report` says so itself (ok, refusal and its reset time, usage);
raising an Exception is `ended badly` with the error in the transcript and the ending.
`ctx.on_line` given to it is the turn's capped transcript; `ctx.stopping` is set when
the turn is stopped and the callable should return soon after. A thread cannot be
killed, so when the grace is over the turn is abandoned (RULES 2 escalation): `stop()`
returns False, `abandoned` is True, and the turn still holds its slot until the callable
returns (`ended` turns True then).
"""

from __future__ import annotations

import dataclasses
import importlib
import threading
from collections.abc import Callable
from typing import Any

from hive.agents.base import (
    ENDED_BADLY,
    ENDED_UNEXPECTEDLY,
    FINISHED,
    Report,
    Turn,
    TurnContext,
    TurnOutcome,
    TurnStartError,
)
from hive.agents.protocol import ProtocolError, refusal_kind

Agent = Callable[[TurnContext], Any]


def load_callable(target: str) -> Agent:
    """`<module>:<callable>` imported and checked; TurnStartError says what is wrong."""
    module_name, sep, attribute = target.partition(":")
    if not sep or not module_name or not attribute or ":" in attribute:
        raise TurnStartError(f"python:{target} is not python:<module>:<callable>")
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:
        raise TurnStartError(
            f"python:{target}: module {module_name} does not import: {exc}"
        ) from exc
    fn = getattr(module, attribute, None)
    if fn is None or not callable(fn):
        raise TurnStartError(f"python:{target}: {module_name} has no callable {attribute}")
    found: Callable[[TurnContext], Any] = fn
    return found


class PythonTurn(Turn):
    kill_stops_it = False

    def __init__(self, ctx: TurnContext, fn: Agent) -> None:
        super().__init__(ctx)
        self._fn = fn
        self._agent_ctx = dataclasses.replace(ctx, on_line=self.transcript.line)
        thread = threading.Thread(target=self._run, name=f"hive-turn-{ctx.issue}", daemon=True)
        thread.start()
        self._started()

    def _run(self) -> None:
        self._begun.wait()
        try:
            result = self._fn(self._agent_ctx)
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc}"
            self.transcript.note(f"the agent raised {error}")
            self._record_exit()
            self._finish(ENDED_BADLY, error=error)
            return
        except BaseException as exc:  # SystemExit and the like: not an answer
            self._record_exit()
            self._finish(ENDED_UNEXPECTEDLY, error=f"{type(exc).__name__}: {exc}")
            return
        self._record_exit()
        self._finish(self._outcome_of(result))

    def _outcome_of(self, result: object) -> TurnOutcome:
        if result is None or result is True:
            return FINISHED
        if result is False:
            return ENDED_BADLY
        if isinstance(result, Report):
            if result.usage is not None:
                self._saw_usage(result.usage)
            if result.refusal is not None:
                try:
                    self._saw_refusal(refusal_kind(result.refusal), result.resets_at)
                except ProtocolError as exc:
                    self.transcript.note(str(exc))
            return FINISHED if result.ok else ENDED_BADLY
        self.transcript.note(
            f"the agent returned {type(result).__name__}: expected None, a bool or a Report"
        )
        return ENDED_BADLY


def start_python(target: str, ctx: TurnContext) -> PythonTurn:
    """Start the callable named by `<module>:<callable>` in a worker thread."""
    return PythonTurn(ctx, load_callable(target))
