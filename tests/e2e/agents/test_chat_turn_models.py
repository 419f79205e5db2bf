"""A bee's bot's turn with the REAL Claude Code (against the fake Messages API,
fake_api.py) and the REAL Codex (the fake Responses API): a person's question about an
issue resumes the conversation its attempt left, the model's text is the answer, and
what the turn cost (Claude Code's own figure) is counted in the day's spend."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from hive.agents.launch import Launch
from hive.chat.turns import ChatTurns, TurnsConfig
from hive.rules.chat import Kind
from hive.rules.keys import key_slots
from hive.rules.spend import day_start
from hive.store import chat as store
from hive.store import spend
from tests.live.runtime.conftest import make_runtime  # noqa: F401 (the runners' fixture)

from .fake_api import FakeApi
from .fake_responses import FakeResponses
from .test_claude import claude  # noqa: F401 (the fixture: make agents)
from .test_codex import codex  # noqa: F401
from .test_conversation_travels import (  # noqa: F401 (the fixtures api, runners, responses)
    ISSUE,
    api,
    attempt,
    codex_variables,
    responses,
    runners,
)

pytestmark = [pytest.mark.e2e, pytest.mark.live]


def chat_turns(rt: Any, agent: str, program: Path, url_variable: str, **kw: Any) -> ChatTurns:
    """The chat's turns on `rt`, run by `agent` (its executable `program`), which reaches
    its fake API through `url_variable`."""
    config = TurnsConfig(
        by="chat",
        agent=agent,
        keys=key_slots(rt.settings.worker_keys),
        launch=Launch(pass_env=(url_variable,), agent_bin=str(program)),
    )
    return ChatTurns(rt.db, rt.checkout, config, **kw)


def answer_to(rt: Any, row: int) -> str:
    """The body of the one chat row `row`."""
    (answer,) = [r for r in store.rows(rt.db) if r["id"] == row]
    return str(answer["body"])


def test_a_bees_bot_resumes_the_issues_claude_conversation_with_the_question(
    runners: tuple[Any, Any],  # noqa: F811
    api: FakeApi,  # noqa: F811
    claude: Path,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rt, _ = runners
    api.play(("text", "first attempt's answer: I touched src/app.py to fix the import"))
    first = attempt(rt, tmp_path / "home-a", monkeypatch)
    assert first.outcome == "finished"
    question = "@claude:hive.test #11 why did you touch src/app.py?"
    owed = store.Owed("answer:claude:$q", "claude", Kind.ANSWER, issue=ISSUE, asked=question)
    row = store.owe(rt.db, owed)
    api.play(("text", "Because the import in src/app.py was broken."))
    before = spend.since(rt.db, day_start(datetime.now(UTC)))
    turns = chat_turns(
        rt, "claude", claude, "ANTHROPIC_BASE_URL", cost=lambda usage: usage and usage.cost_usd
    )
    done = turns.run_once()
    assert (done.row, done.step) == (row, "run")
    sent = str(api.requests[-1]["messages"])
    assert "first attempt's answer" in sent, "the turn resumed the attempt's conversation"
    assert "why did you touch src/app.py?" in sent
    assert answer_to(rt, row) == "Because the import in src/app.py was broken."
    assert spend.since(rt.db, day_start(datetime.now(UTC))) > before


def test_a_bees_bot_resumes_the_issues_codex_thread_with_the_question(
    make_runtime: Any,  # noqa: F811
    codex: Path,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    responses: FakeResponses,  # noqa: F811
) -> None:
    rt = make_runtime(**codex_variables(codex))
    responses.play(("text", "first attempt's answer: the import was broken"))
    assert attempt(rt, tmp_path / "home-a", monkeypatch).outcome == "finished"
    owed = store.Owed("answer:codex:$q", "codex", Kind.ANSWER, issue=ISSUE, asked="why?")
    row = store.owe(rt.db, owed)
    responses.play(("text", "Because the import was broken."))
    done = chat_turns(rt, "codex", codex, "OPENAI_BASE_URL").run_once()
    assert (done.row, done.step) == (row, "run")
    sent = str(responses.requests[-1]["input"])
    assert "first attempt's answer" in sent and "why?" in sent
    assert answer_to(rt, row) == "Because the import was broken."
