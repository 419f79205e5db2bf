"""A quota refusal of the REAL Claude Code or Codex CLI that names its reset rests the key
until then, end to end: a runner's bee runs the CLI against a fake API (fake_api.py,
fake_responses.py) that refuses with a reset time, the order ends `quota exhausted`, and
the key's rest in the store lasts until that time, not HIVE_QUOTA_REST_SECONDS (as
tests/live/runtime/test_key_rests.py shows for a command agent's `resets=`)."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from hive.store import keyrests
from hive.testing import wait_for_ending
from tests.live.runtime.conftest import make_runtime, queue  # noqa: F401
from tests.live.runtime.test_runner import claimer_of

from .fake_api import FakeApi
from .fake_responses import FakeResponses
from .test_claude import claude  # noqa: F401 (the fixture: make agents)
from .test_codex import codex, reset_minute_end  # noqa: F401

pytestmark = [pytest.mark.e2e, pytest.mark.live]

ISSUE = 1
TURN_SECONDS = 90.0


def rest_after_one_turn(rt: Any, home: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """Run the issue once on `rt`; the one key's rest once its order has ended."""
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    queue(rt, ISSUE)
    assert claimer_of(rt).run_once().started == (ISSUE,)
    order = wait_for_ending(rt.db, ISSUE, TURN_SECONDS)
    assert order.outcome == "quota exhausted", order
    (rest,) = keyrests.resting(rt.db)
    return rest


def test_claudes_spend_limit_rests_the_key_until_access_is_regained(
    make_runtime: Callable[..., Any],  # noqa: F811
    claude: Path,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    api = FakeApi().start()
    try:
        regain = (datetime.now(UTC) + timedelta(days=1)).replace(
            hour=0, minute=0, second=0, microsecond=0
        )
        said = (
            "You have reached your specified API usage limits. You will regain access on"
            f" {regain:%Y-%m-%d} at 00:00 UTC."
        )
        api.play(("status", 400, "invalid_request_error", said))
        monkeypatch.setenv("ANTHROPIC_BASE_URL", api.url)
        rt = make_runtime(
            AGENT="claude", AGENT_BIN=str(claude), AGENT_PASS_ENV="ANTHROPIC_BASE_URL"
        )
        rest = rest_after_one_turn(rt, tmp_path / "home", monkeypatch)
        assert (rest.key_index, rest.until, rest.reason) == (0, regain, "quota exhausted")
    finally:
        api.stop()


def test_codexs_usage_limit_rests_the_key_until_the_minute_it_names_is_over(
    make_runtime: Callable[..., Any],  # noqa: F811
    codex: Path,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    api = FakeResponses().start()
    try:
        resets = int(time.time()) + 5 * 3600
        api.play(("usage_limit", resets))
        monkeypatch.setenv("OPENAI_BASE_URL", api.url)
        rt = make_runtime(AGENT="codex", AGENT_BIN=str(codex), AGENT_PASS_ENV="OPENAI_BASE_URL")
        rest = rest_after_one_turn(rt, tmp_path / "home", monkeypatch)
        until = reset_minute_end(resets)
        assert (rest.key_index, rest.until, rest.reason) == (0, until, "quota exhausted")
    finally:
        api.stop()
