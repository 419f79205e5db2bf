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
from .test_conversation_travels import ISSUE, api, attempt, runners  # noqa: F401

pytestmark = [pytest.mark.e2e, pytest.mark.live]


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
    config = TurnsConfig(
        by="chat",
        agent="claude",
        keys=key_slots(rt.settings.worker_keys),
        launch=Launch(pass_env=("ANTHROPIC_BASE_URL",), agent_bin=str(claude)),
    )
    before = spend.since(rt.db, day_start(datetime.now(UTC)))
    done = ChatTurns(
        rt.db, rt.checkout, config, cost=lambda usage: usage and usage.cost_usd
    ).run_once()
    assert (done.row, done.step) == (row, "run")
    sent = str(api.requests[-1]["messages"])
    assert "first attempt's answer" in sent, "the turn resumed the attempt's conversation"
    assert "why did you touch src/app.py?" in sent
    (answer,) = [r for r in store.rows(rt.db) if r["id"] == row]
    assert answer["body"] == "Because the import in src/app.py was broken."
    assert spend.since(rt.db, day_start(datetime.now(UTC))) > before


def test_a_bees_bot_resumes_the_issues_codex_thread_with_the_question(
    make_runtime: Any,  # noqa: F811
    codex: Path,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    responses = FakeResponses().start()
    try:
        monkeypatch.setenv("OPENAI_BASE_URL", responses.url)
        variables = {"AGENT": "codex", "AGENT_BIN": str(codex), "AGENT_PASS_ENV": "OPENAI_BASE_URL"}
        rt = make_runtime(**variables)
        responses.play(("text", "first attempt's answer: the import was broken"))
        assert attempt(rt, tmp_path / "home-a", monkeypatch).outcome == "finished"
        owed = store.Owed("answer:codex:$q", "codex", Kind.ANSWER, issue=ISSUE, asked="why?")
        row = store.owe(rt.db, owed)
        responses.play(("text", "Because the import was broken."))
        config = TurnsConfig(
            by="chat",
            agent="codex",
            keys=key_slots(rt.settings.worker_keys),
            launch=Launch(pass_env=("OPENAI_BASE_URL",), agent_bin=str(codex)),
        )
        done = ChatTurns(rt.db, rt.checkout, config).run_once()
        assert (done.row, done.step) == (row, "run")
        sent = str(responses.requests[-1]["input"])
        assert "first attempt's answer" in sent and "why?" in sent
        (answer,) = [r for r in store.rows(rt.db) if r["id"] == row]
        assert answer["body"] == "Because the import was broken."
    finally:
        responses.stop()
