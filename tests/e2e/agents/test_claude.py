"""The `claude` adapter against the REAL Claude Code CLI (installed at its pinned version
by `make agents`), pointed at a fake Messages API on 127.0.0.1 (fake_api.py) through
HIVE_AGENT_PASS_ENV's ANTHROPIC_BASE_URL."""

from __future__ import annotations

import json
import subprocess
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from hive.agents import Turn, TurnContext, start_turn
from hive.agents.launch import Launch
from hive.rules.keys import REFUSAL_QUOTA, REFUSAL_TRANSIENT, sort_refusal

from .fake_api import FakeApi, running

pytestmark = [pytest.mark.e2e]

ROOT = Path(__file__).resolve().parents[3]
CLAUDE = ROOT / ".hive" / "npm" / "node_modules" / ".bin" / "claude"
KEY = "sk-ant-fake-key-0000"
TURN_SECONDS = 60.0
# a refused request ends within this: Claude Code's own retries are bounded
REFUSAL_SECONDS = 30.0


@pytest.fixture(scope="module")
def claude() -> Path:
    done = subprocess.run(["make", "agents"], cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0 or not CLAUDE.exists():
        pytest.skip(f"make agents could not install the CLIs: {done.stderr[-500:]}")
    return CLAUDE


@pytest.fixture(scope="module")
def api() -> Iterator[FakeApi]:
    yield from running()


class Lines:
    def __init__(self) -> None:
        self.lines: list[tuple[str, str]] = []
        self.lock = threading.Lock()

    def __call__(self, kind: str, text: str) -> None:
        with self.lock:
            self.lines.append((kind, text))

    def texts(self) -> list[str]:
        with self.lock:
            return [t for _, t in self.lines]


def run(
    claude: Path,
    api: FakeApi,
    worktree: Path,
    monkeypatch: pytest.MonkeyPatch,
    **changes: object,
) -> tuple[Turn, Lines]:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", api.url)
    worktree.mkdir(parents=True, exist_ok=True)
    lines = Lines()
    fields: dict[str, object] = {
        "key": KEY,
        "launch": Launch(pass_env=("ANTHROPIC_BASE_URL",), agent_bin=str(claude)),
    }
    ctx = TurnContext(
        issue=11,
        title="t",
        body="",
        branch="queen-11",
        boundary=("out.txt",),
        brief="write out.txt",
        worktree=worktree,
        turn_max_seconds=TURN_SECONDS,
        on_line=lines,
        **(fields | changes),  # type: ignore[arg-type]
    )
    turn = start_turn("claude", ctx)
    assert turn.wait(TURN_SECONDS + 10), "the turn did not end"
    return turn, lines


def test_a_turn_reads_session_text_usage_and_cost_from_the_stream(
    claude: Path, api: FakeApi, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    api.play(("text", "hello from the fake"))
    turn, lines = run(claude, api, tmp_path / "wt", monkeypatch)
    assert turn.outcome == "finished", lines.texts()
    assert "assistant: hello from the fake" in lines.texts()
    usage = turn.usage
    assert usage is not None and usage.provider == "anthropic"
    # the final result's figures, counted once (the stream repeats usage per line)
    assert (usage.input_tokens, usage.output_tokens) == (100, 20)
    assert usage.cost_usd is not None and usage.cost_usd > 0
    assert turn.conversation is not None and turn.conversation.agent == "claude"
    assert KEY.encode() not in turn.conversation.data
    assert api.requests and api.requests[0]["stream"] is True


def test_a_tool_call_from_the_model_writes_a_file_in_the_worktree(
    claude: Path, api: FakeApi, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    worktree = tmp_path / "wt"
    api.play(("write", str(worktree / "out.txt"), "written by the tool\n"))
    turn, lines = run(claude, api, worktree, monkeypatch)
    assert turn.outcome == "finished", lines.texts()
    assert (worktree / "out.txt").read_text() == "written by the tool\n"
    assert any(t.startswith("tool Write:") for t in lines.texts())


def test_a_rate_limit_is_a_transient_refusal_within_a_bound(
    claude: Path, api: FakeApi, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    api.play(("status", 429, "rate_limit_error", "slow down"))
    began = time.monotonic()
    turn, lines = run(claude, api, tmp_path / "wt", monkeypatch)
    assert time.monotonic() - began < REFUSAL_SECONDS
    assert turn.outcome == "refused", lines.texts()
    assert turn.refusal is not None and sort_refusal(turn.refusal) == REFUSAL_TRANSIENT


def test_a_credit_balance_too_low_is_a_quota_refusal(
    claude: Path, api: FakeApi, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    api.play(
        (
            "status",
            400,
            "invalid_request_error",
            "Your credit balance is too low to access the Anthropic API.",
        )
    )
    turn, lines = run(claude, api, tmp_path / "wt", monkeypatch)
    assert turn.outcome == "refused", lines.texts()
    assert turn.refusal is not None and sort_refusal(turn.refusal) == REFUSAL_QUOTA


def test_an_accounts_usage_limit_is_a_quota_refusal_until_its_reset(
    claude: Path, api: FakeApi, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a subscription's sign-in (its token, no API key): the API's 429 names the reset,
    # and Claude Code passes it on as the usage limit's rate_limit_info
    resets = int(time.time()) + 5 * 3600
    monkeypatch.setenv("CLAUDE_CODE_OAUTH_TOKEN", "sk-ant-oat01-fake-token-0000")
    api.play(("limit", resets))
    signed_in = Launch(
        pass_env=("ANTHROPIC_BASE_URL", "CLAUDE_CODE_OAUTH_TOKEN"), agent_bin=str(claude)
    )
    turn, lines = run(claude, api, tmp_path / "wt", monkeypatch, key="", launch=signed_in)
    assert turn.outcome == "refused", lines.texts()
    assert turn.refusal is not None and sort_refusal(turn.refusal) == REFUSAL_QUOTA
    assert turn.ending is not None
    assert turn.ending.resets_at == datetime.fromtimestamp(resets, UTC)
    assert len(api.requests) == 1, "a usage limit is not retried"


def test_a_keys_spend_limit_is_a_quota_refusal_until_the_access_it_names(
    claude: Path, api: FakeApi, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    regain = (datetime.now(UTC) + timedelta(days=1)).replace(hour=0, minute=0, second=0)
    regain = regain.replace(microsecond=0)
    said = (
        "You have reached your specified API usage limits. You will regain access on"
        f" {regain:%Y-%m-%d} at 00:00 UTC."
    )
    api.play(("status", 400, "invalid_request_error", said))
    turn, lines = run(claude, api, tmp_path / "wt", monkeypatch)
    assert turn.outcome == "refused", lines.texts()
    assert turn.refusal is not None and sort_refusal(turn.refusal) == REFUSAL_QUOTA
    assert turn.ending is not None and turn.ending.resets_at == regain


def test_a_conversation_resumes_in_another_worktree_and_home(
    claude: Path, api: FakeApi, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    api.play(("text", "first attempt's answer"))
    first, _ = run(claude, api, tmp_path / "runner-a" / "wt", monkeypatch)
    assert first.conversation is not None
    api.play(("text", "second attempt's answer"))
    second, lines = run(
        claude, api, tmp_path / "runner-b" / "wt", monkeypatch, resume=first.conversation
    )
    assert second.outcome == "finished", lines.texts()
    sent = json.dumps(api.requests[-1]["messages"])
    assert "first attempt's answer" in sent, "the resumed request carries the earlier turn"
    assert second.conversation is not None
    assert second.conversation.session_id == first.conversation.session_id


def test_a_huge_line_is_read_whole_and_kept_capped(
    claude: Path, api: FakeApi, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    api.play(("huge", 300_000))
    turn, lines = run(claude, api, tmp_path / "wt", monkeypatch)
    assert turn.outcome == "finished", lines.texts()[-5:]
    assert turn.usage is not None and turn.usage.output_tokens == 20
    assert any(t.startswith("assistant: xxx") and t.endswith("[cut]") for t in lines.texts())


def test_a_stream_cut_mid_way_ends_the_turn(
    claude: Path, api: FakeApi, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    api.play(("cut",))
    turn, lines = run(claude, api, tmp_path / "wt", monkeypatch)
    assert turn.outcome in ("ended badly", "refused"), lines.texts()


def test_a_conversation_resumes_in_a_worktree_whose_path_is_long(
    claude: Path, api: FakeApi, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # past 200 characters Claude Code names the session's folder by a cut path and a hash
    api.play(("text", "first attempt's answer"))
    first, _ = run(claude, api, tmp_path / "runner-a" / "wt", monkeypatch)
    assert first.conversation is not None
    long = tmp_path / ("a" * 120) / ("b" * 120) / "wt"
    api.play(("text", "second attempt's answer"))
    second, lines = run(claude, api, long, monkeypatch, resume=first.conversation)
    assert second.outcome == "finished", lines.texts()
    assert "first attempt's answer" in json.dumps(api.requests[-1]["messages"])
