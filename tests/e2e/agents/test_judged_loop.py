"""The whole loop with real CLIs and no person (issue 26): `hive serve`'s tree, in
process, with the REAL Claude Code as the bee (fake Messages API) and the REAL Codex as
the reviewer (fake Responses API). An issue written with no boundary and no criteria is
shaped by the demo shaper (HIVE_SHAPE=apply), dispatched, built by the claude bee,
sent back once by the codex reviewer with a note the next attempt's brief carries,
built again, accepted, checked and merged."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hive.store import issues, orders, shapes
from hive.store.issues import NewIssue
from hive.swarm import wait_for

from .fake_api import FakeApi
from .fake_responses import FakeResponses
from .test_claude import claude  # noqa: F401 (the fixture: make agents)
from .test_codex import codex  # noqa: F401
from .test_model_reviewer import messages, responses  # noqa: F401

pytestmark = [pytest.mark.e2e, pytest.mark.live]

LOOP_SECONDS = 240.0
NOTE = "it says Bonjour to no one in particular"
BODY = "Greet friends in French.\n\nappend `docs/french.md`: Bonjour\n"


def test_a_free_form_issue_is_shaped_built_sent_back_accepted_checked_and_merged(
    hive_tree: Callable[..., Any],
    claude: Path,  # noqa: F811
    codex: Path,  # noqa: F811
    messages: FakeApi,  # noqa: F811
    responses: FakeResponses,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("ANTHROPIC_BASE_URL", messages.url)
    monkeypatch.setenv("OPENAI_BASE_URL", responses.url)
    # the reviewer is not HIVE_AGENT's CLI: it is found on PATH
    monkeypatch.setenv("PATH", f"{codex.parent}{os.pathsep}{os.environ.get('PATH', '')}")
    messages.play(
        ("bash", "printf 'Bonjour\\n' > docs/french.md"),
        ("bash", "printf 'Bonjour, mes amis\\n' > docs/french.md"),
        ("text", "done"),
    )
    responses.play(
        ("text", f"HIVE-CRITERION: 1 unmet: {NOTE}"),
        ("text", "HIVE-CRITERION: 1 met"),
    )
    hive = hive_tree(
        "claude",
        AGENT_BIN=str(claude),
        AGENT_PASS_ENV="ANTHROPIC_BASE_URL,OPENAI_BASE_URL",
        REVIEWER_AGENT="codex",
        SHAPER_AGENT="demo",
        SHAPE="apply",
        CHECK_UNIT="grep -q amis docs/french.md",
        PUBLISH="push",
    )
    db = hive.runtime.db
    number = issues.create(db, NewIssue(title="French", body=BODY)).number

    def merged() -> bool:
        issue = issues.get(db, number)
        return issue is not None and (issue.closed_reason or "").startswith("merged as")

    wait_for(merged, LOOP_SECONDS, "the issue merged")
    shape = shapes.get(db, number)
    assert shape is not None and shape.state == shapes.APPLIED
    order = orders.get(db, number)
    assert order is not None and order.attempt == 2
    assert NOTE in (order.brief or "")  # the send-back's note, in attempt 2's brief
    history = [a.snapshot.get("review_state") for a in orders.history(db, number)]
    assert history == ["sendback"] and order.review_state == "accept"
