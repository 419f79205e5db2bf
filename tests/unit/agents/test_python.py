"""`python:` turns: a callable in a worker thread; its answer is the outcome."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from hive.agents import (
    ENDED_BADLY,
    ENDED_UNEXPECTEDLY,
    FINISHED,
    REASON_BOUND,
    REFUSED,
    STOPPED,
    Turn,
    TurnContext,
    TurnStartError,
    Usage,
    start_turn,
)
from hive.agents.transcript import LINE_MAX_BYTES

from . import sample_agents
from .conftest import Recorder

Start = Callable[..., Turn]
HERE = "python:tests.unit.agents.sample_agents"


@pytest.fixture(autouse=True)
def _fresh_events() -> Iterator[None]:
    sample_agents.RELEASE.clear()
    sample_agents.SAW_STOP.clear()
    yield
    sample_agents.RELEASE.set()  # never leave a worker thread waiting


@pytest.mark.parametrize(
    ("name", "outcome"),
    [
        ("returns_none", FINISHED),
        ("returns_true", FINISHED),
        ("returns_false", ENDED_BADLY),
        ("reports_failure", ENDED_BADLY),
        ("returns_a_number", ENDED_BADLY),
        ("raises", ENDED_BADLY),
    ],
)
def test_the_callables_answer_is_the_outcome(
    start: Start, recorder: Recorder, name: str, outcome: str
) -> None:
    turn = start(f"{HERE}:{name}")
    assert turn.wait(5)
    assert turn.outcome == outcome
    if name != "returns_a_number":
        assert not any("the agent returned" in text for text in recorder.texts("hive"))
    assert turn.pid is None and turn.pgid is None and not turn.kill_stops_it


def test_an_exception_is_in_the_ending_and_the_transcript(start: Start, recorder: Recorder) -> None:
    turn = start(f"{HERE}:raises")
    assert turn.wait(5)
    assert turn.ending is not None
    assert turn.ending.error == "ValueError: the model said no"
    assert any("the model said no" in text for text in recorder.texts("hive"))


def test_a_reported_refusal_and_usage_reach_the_ending(start: Start) -> None:
    turn = start(f"{HERE}:reports_a_refusal")
    assert turn.wait(5)
    assert turn.ending is not None
    assert (turn.outcome, turn.ending.refusal) == (REFUSED, "rate-limit")
    assert turn.ending.usage == Usage("anthropic", "m1", 7, 0)


def test_a_malformed_reported_refusal_is_noted_and_not_a_refusal(
    start: Start, recorder: Recorder
) -> None:
    turn = start(f"{HERE}:reports_a_malformed_refusal")
    assert turn.wait(5)
    assert (turn.outcome, turn.refusal) == (FINISHED, None)
    assert any("is not a refusal kind" in text for text in recorder.texts("hive"))


def test_the_callables_lines_reach_the_transcript_capped(start: Start, recorder: Recorder) -> None:
    assert start(f"{HERE}:returns_none").wait(5)
    assert recorder.texts("stdout") == ["working on #7 in wt"]
    assert start(f"{HERE}:writes_a_long_line").wait(5)
    assert recorder.texts("stdout")[-1] == "y" * LINE_MAX_BYTES + " [cut]"


def test_a_callable_that_honours_stopping_is_stopped(start: Start) -> None:
    turn = start(f"{HERE}:honours_stopping")
    assert turn.stop("drain hand-back") is True
    assert turn.ending is not None
    assert (turn.outcome, turn.ending.stop_reason) == (STOPPED, "drain hand-back")


def test_a_callable_past_its_bound_is_stopped(start: Start) -> None:
    turn = start(f"{HERE}:honours_stopping", turn_max_seconds=0.2)
    assert turn.wait(5)
    assert (
        turn.ending is not None
        and turn.ending.stop_reason == f"{REASON_BOUND} (HIVE_TURN_MAX_SECONDS)"
    )


def test_a_callable_that_ignores_stopping_is_abandoned_and_holds_its_slot(
    make_ctx: Callable[..., TurnContext], recorder: Recorder
) -> None:
    turn = start_turn(f"{HERE}:ignores_stopping", make_ctx(stop_grace_ms=100))
    assert turn.stop("heartbeat lost") is False
    assert turn.abandoned and not turn.ended, "an abandoned turn still holds its slot"
    assert sample_agents.SAW_STOP.is_set()
    assert any("abandoned" in text for text in recorder.texts("hive"))
    assert turn.stop("again") is False, "stopping an abandoned turn again is safe"
    assert sum("abandoned" in text for text in recorder.texts("hive")) == 1

    sample_agents.RELEASE.set()
    assert turn.wait(5)
    assert turn.ending is not None
    assert (turn.outcome, turn.ending.stop_reason) == (STOPPED, "heartbeat lost")


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("python:no_such_module_here:run", "module no_such_module_here does not import"),
        (f"{HERE}:missing", "has no callable missing"),
        (f"{HERE}:not_callable", "has no callable not_callable"),
        ("python:only_a_module", "is not python:<module>:<callable>"),
    ],
)
def test_a_bad_python_spec_says_why_in_one_line(
    make_ctx: Callable[..., TurnContext], spec: str, message: str
) -> None:
    with pytest.raises(TurnStartError, match=message) as raised:
        start_turn(spec, make_ctx())
    assert "\n" not in str(raised.value)


def test_a_callable_that_exits_the_interpreter_ended_unexpectedly(start: Start) -> None:
    turn = start(f"{HERE}:exits")
    assert turn.wait(5)
    assert turn.ending is not None
    assert (turn.outcome, turn.ending.error) == (ENDED_UNEXPECTEDLY, "SystemExit: 3")


def test_an_on_end_that_raises_still_ends_the_turn(make_ctx: Callable[..., TurnContext]) -> None:
    def broken(ending: object) -> None:
        raise RuntimeError("actor is gone")

    turn = start_turn(f"{HERE}:returns_none", make_ctx(on_end=broken))
    assert turn.wait(5) and turn.outcome == FINISHED


def test_refusal_and_usage_are_readable_before_the_end(start: Start) -> None:
    turn = start(f"{HERE}:reports_a_refusal")
    assert turn.wait(5)
    assert (turn.refusal, turn.usage) == ("rate-limit", Usage("anthropic", "m1", 7, 0))


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"turn_max_seconds": 0}, "turn bound 0 s: expected above 0"),
        ({"stop_grace_ms": 3001}, r"stop grace 3001 ms: expected 0 to 3000"),
        ({"stop_grace_ms": -1}, r"stop grace -1 ms"),
    ],
)
def test_a_context_with_a_bad_bound_or_grace_is_refused(
    make_ctx: Callable[..., TurnContext], changes: dict[str, object], message: str
) -> None:
    with pytest.raises(TurnStartError, match=message):
        make_ctx(**changes)


def test_a_context_takes_a_str_worktree_and_a_list_boundary(
    make_ctx: Callable[..., TurnContext], worktree: Path
) -> None:
    ctx = make_ctx(worktree=str(worktree), boundary=["docs"])
    assert (ctx.worktree, ctx.boundary) == (worktree, ("docs",))
