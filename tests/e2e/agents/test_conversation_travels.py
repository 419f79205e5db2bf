"""A conversation travels with its order, end to end: runner A's bee runs the REAL Claude
Code (against the fake Messages API, fake_api.py) for attempt 1 of an issue and stores
its session with the order (capped, without the key); the review sends it back; runner
B (another workdir, clone and HOME) runs attempt 2, restores the session and resumes it:
the fake API sees attempt 1's messages in attempt 2's request. A conversation that
cannot be restored (its file broken, or too large to keep) starts fresh, saying why.
Codex's thread travels the same way (against the fake Responses API)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from hive.agents.conversation import CONVERSATION_MAX_BYTES, REDACTED
from hive.rules.lifecycle import ReviewState
from hive.rules.states import VERDICT_SENDBACK
from hive.store import conversations, reviews, transcript
from hive.store.reviews import Verdict
from hive.testing import wait_for_ending
from tests.live.runtime.conftest import eventually, make_runtime, queue  # noqa: F401
from tests.live.runtime.test_runner import claimer_of

from .fake_api import FakeApi, running
from .fake_responses import OUTPUT_TOKENS, FakeResponses
from .test_claude import claude  # noqa: F401 (the fixture: make agents)
from .test_codex import codex  # noqa: F401

pytestmark = [pytest.mark.e2e, pytest.mark.live]

KEY = "test-key-0123456789"  # hive.testing.hive_environ's worker key
ISSUE = 11
TURN_SECONDS = 90.0


@pytest.fixture(scope="module")
def api() -> Iterator[FakeApi]:
    yield from running()


@pytest.fixture
def runners(
    make_runtime: Callable[..., Any],  # noqa: F811
    claude: Path,  # noqa: F811
    api: FakeApi,
    monkeypatch: pytest.MonkeyPatch,
) -> tuple[Any, Any]:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", api.url)
    variables = {
        "AGENT": "claude",
        "AGENT_BIN": str(claude),
        "AGENT_PASS_ENV": "ANTHROPIC_BASE_URL",
    }
    return make_runtime(**variables), make_runtime(**variables)


@pytest.fixture
def responses(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeResponses]:
    """The fake Responses API, started, with OPENAI_BASE_URL naming it for Codex."""
    fake = FakeResponses().start()
    monkeypatch.setenv("OPENAI_BASE_URL", fake.url)
    try:
        yield fake
    finally:
        fake.stop()


def codex_variables(program: Path) -> dict[str, str]:
    """A runner's variables for Codex at `program`, reaching the fake Responses API."""
    return {"AGENT": "codex", "AGENT_BIN": str(program), "AGENT_PASS_ENV": "OPENAI_BASE_URL"}


def attempt(rt: Any, home: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """One attempt of the issue on `rt` (a runner of its own), with `home` as HOME; its
    ended order, sent back so that a next attempt may follow."""
    home.mkdir(parents=True, exist_ok=True)
    monkeypatch.setenv("HOME", str(home))
    queue(rt, ISSUE)  # a new attempt replaces the row its review sent back
    assert claimer_of(rt).run_once().started == (ISSUE,)
    order = wait_for_ending(rt.db, ISSUE, TURN_SECONDS)
    sendback = Verdict(VERDICT_SENDBACK, ReviewState.SENDBACK, "again")
    assert reviews.write_verdict(rt.db, ISSUE, order.conversation_id, sendback).landed
    eventually(lambda: rt.host.running() == 0)
    return order


def said(rt: Any, order: Any) -> list[str]:
    return [line.text for line in transcript.read(rt.db, order.conversation_id)]


def test_attempt_two_on_another_runner_resumes_attempt_ones_conversation(
    runners: tuple[Any, Any], api: FakeApi, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = runners
    api.play(("text", f"first attempt's answer, echoing {KEY}"))
    first = attempt(a, tmp_path / "home-a", monkeypatch)
    assert first.outcome == "finished", said(a, first)
    stored = conversations.get(a.db, ISSUE)
    assert stored is not None and stored.agent == "claude" and not stored.note
    assert 0 < len(stored.data) <= CONVERSATION_MAX_BYTES
    # the session file held the key (the model echoed it): the stored copy does not
    assert KEY.encode() not in stored.data and REDACTED in stored.data

    api.play(("text", "second attempt's answer"))
    second = attempt(b, tmp_path / "home-b", monkeypatch)
    assert second.attempt == 2 and second.outcome == "finished", said(b, second)
    sent = str(api.requests[-1]["messages"])
    assert "first attempt's answer" in sent, "attempt 2's request carries attempt 1's turn"
    resumed = conversations.get(b.db, ISSUE)
    assert resumed is not None and resumed.session_id == stored.session_id
    assert b"second attempt's answer" in resumed.data


def test_a_broken_conversation_starts_the_next_attempt_fresh_with_a_sentence(
    runners: tuple[Any, Any], api: FakeApi, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = runners
    api.play(("text", "first attempt's answer"))
    attempt(a, tmp_path / "home-a", monkeypatch)
    with psycopg.connect(a.url, autocommit=True) as conn:
        conn.execute(
            "UPDATE hive.queen_conversation SET bytes = 'junk', size = 4 WHERE issue = %s",
            (ISSUE,),
        )
    api.play(("text", "a fresh answer"))
    second = attempt(b, tmp_path / "home-b", monkeypatch)
    assert second.outcome == "finished", said(b, second)
    assert any("not restored" in t and "starting fresh" in t for t in said(b, second))
    assert "first attempt's answer" not in str(api.requests[-1]["messages"])


def test_a_conversation_too_large_to_keep_starts_the_next_attempt_fresh_saying_so(
    runners: tuple[Any, Any], api: FakeApi, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = runners
    monkeypatch.setattr("hive.agents.resuming.CONVERSATION_MAX_BYTES", 100)
    api.play(("text", "first attempt's answer"))
    first = attempt(a, tmp_path / "home-a", monkeypatch)
    assert any("over 100: not kept" in t for t in said(a, first))
    stored = conversations.get(a.db, ISSUE)
    assert stored is not None and stored.data == b"" and "over 100" in stored.note
    monkeypatch.undo()
    monkeypatch.setenv("ANTHROPIC_BASE_URL", api.url)
    api.play(("text", "a fresh answer"))
    second = attempt(b, tmp_path / "home-b", monkeypatch)
    assert second.outcome == "finished", said(b, second)
    assert any("over 100" in t and "starting fresh" in t for t in said(b, second))
    assert "first attempt's answer" not in str(api.requests[-1]["messages"])


def test_a_codex_thread_travels_to_another_runner_as_well(
    make_runtime: Callable[..., Any],  # noqa: F811
    codex: Path,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    responses: FakeResponses,
) -> None:
    variables = codex_variables(codex)
    a, b = make_runtime(**variables), make_runtime(**variables)
    responses.play(("text", f"first attempt's answer, echoing {KEY}"))
    first = attempt(a, tmp_path / "home-a", monkeypatch)
    assert first.outcome == "finished", said(a, first)
    stored = conversations.get(a.db, ISSUE)
    assert stored is not None and stored.agent == "codex"
    assert KEY.encode() not in stored.data and REDACTED in stored.data
    responses.play(("text", "second attempt's answer"))
    second = attempt(b, tmp_path / "home-b", monkeypatch)
    assert second.outcome == "finished", said(b, second)
    assert "first attempt's answer" in str(responses.requests[-1]["input"])
    assert second.output_tokens == OUTPUT_TOKENS  # this attempt's, not the thread's
