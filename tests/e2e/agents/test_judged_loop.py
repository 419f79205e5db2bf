"""The whole loop with real CLIs (issue 26): `hive serve`'s tree, in process, with the
REAL Claude Code as the bee (fake Messages API) and the REAL Codex as the reviewer (fake
Responses API). An issue written with no boundary and no criteria is shaped by the demo
shaper, dispatched, built by the claude bee, sent back once by the codex reviewer with
a note the next attempt's brief carries, built again, accepted, checked and merged:
locally with no person (HIVE_SHAPE=apply), and as a free-form GitHub issue (the fake
GitHub) whose proposal its author accepts with the label `hive:shape-ok`."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hive.store import issues, orders, shapes
from hive.store.issues import NewIssue
from hive.swarm import wait_for
from hive.testing import wait_for_merge
from tests.fakes.fake_github import FakeGitHub
from tests.live.forge.conftest import TOKEN, github  # noqa: F401

from .fake_api import FakeApi
from .fake_responses import FakeResponses
from .test_claude import claude  # noqa: F401 (the fixture: make agents)
from .test_codex import codex  # noqa: F401
from .test_model_reviewer import messages, responses  # noqa: F401

pytestmark = [pytest.mark.e2e, pytest.mark.live]

LOOP_SECONDS = 240.0
NOTE = "it says Bonjour to no one in particular"
BODY = "Greet friends in French.\n\nappend `docs/french.md`: Bonjour\n"


def _script(
    claude_bin: Path,
    codex_bin: Path,
    api: FakeApi,
    answers: FakeResponses,
    home: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> dict[str, str]:
    """The fakes' scripts (two attempts, a send-back then an accept) and the tree's
    variables for the claude bee and the codex reviewer."""
    home.mkdir(exist_ok=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("ANTHROPIC_BASE_URL", api.url)
    monkeypatch.setenv("OPENAI_BASE_URL", answers.url)
    # the reviewer is not HIVE_AGENT's CLI: it is found on PATH
    monkeypatch.setenv("PATH", f"{codex_bin.parent}{os.pathsep}{os.environ.get('PATH', '')}")
    api.play(
        ("bash", "printf 'Bonjour\\n' > docs/french.md"),
        ("bash", "printf 'Bonjour, mes amis\\n' > docs/french.md"),
        ("text", "done"),
    )
    answers.play(
        ("text", f"HIVE-CRITERION: 1 unmet: {NOTE}"),
        ("text", "HIVE-CRITERION: 1 met"),
    )
    return {
        "AGENT_BIN": str(claude_bin),
        "AGENT_PASS_ENV": "ANTHROPIC_BASE_URL,OPENAI_BASE_URL",
        "REVIEWER_AGENT": "codex",
        "SHAPER_AGENT": "demo",
        "CHECK_UNIT": "grep -q amis docs/french.md",
        "PUBLISH": "push",
    }


def _judged_twice(db: Any, number: int) -> None:
    order = orders.get(db, number)
    assert order is not None and order.attempt == 2
    assert NOTE in (order.brief or "")  # the send-back's note, in attempt 2's brief
    history = [a.snapshot.get("review_state") for a in orders.history(db, number)]
    assert history == ["sendback"] and order.review_state == "accept"


def test_a_free_form_issue_is_shaped_built_sent_back_accepted_checked_and_merged(
    hive_tree: Callable[..., Any],
    claude: Path,  # noqa: F811
    codex: Path,  # noqa: F811
    messages: FakeApi,  # noqa: F811
    responses: FakeResponses,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    variables = _script(claude, codex, messages, responses, tmp_path / "home", monkeypatch)
    hive = hive_tree("claude", SHAPE="apply", **variables)
    db = hive.runtime.db
    number = issues.create(db, NewIssue(title="French", body=BODY)).number

    def merged() -> bool:
        issue = issues.get(db, number)
        return issue is not None and (issue.closed_reason or "").startswith("merged as")

    wait_for(merged, LOOP_SECONDS, "the issue merged")
    shape = shapes.get(db, number)
    assert shape is not None and shape.state == shapes.APPLIED
    _judged_twice(db, number)


def test_a_free_form_github_issue_is_shaped_accepted_by_its_label_and_merged(
    hive_tree: Callable[..., Any],
    hive_db_url: str,
    github: FakeGitHub,  # noqa: F811
    claude: Path,  # noqa: F811
    codex: Path,  # noqa: F811
    messages: FakeApi,  # noqa: F811
    responses: FakeResponses,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    variables = _script(claude, codex, messages, responses, tmp_path / "home", monkeypatch)
    number = github.add_issue("French", BODY, ["hive"], hook=False)
    hive = hive_tree(
        "claude",
        FORGE="github",
        GITHUB_REPO=github.full_name,
        GITHUB_TOKEN=TOKEN,
        GITHUB_API_URL=github.api_url,
        GITHUB_POLL_SECONDS="0.5",
        **variables,
    )

    def proposed() -> bool:
        return any("<!-- hive:shape -->" in c["body"] for c in github.comments_on(number))

    wait_for(proposed, LOOP_SECONDS, "the shaper's proposal commented on GitHub")
    assert orders.get(hive.runtime.db, number) is None  # not work until accepted
    github.edit_issue(number, labels=["hive", "hive:shape-ok"], hook=False)
    wait_for_merge(hive_db_url, number, timeout_seconds=LOOP_SECONDS)
    assert "## Boundary" in github.state.issues[number]["body"]  # GitHub's body shaped
    _judged_twice(hive.runtime.db, number)
    wait_for(lambda: github.state.issues[number]["state"] == "closed", 60, "closed on GitHub")
