"""The `codex` adapter against the REAL Codex CLI (installed at its pinned version by
`make agents`), pointed at a fake Responses API on 127.0.0.1 (fake_responses.py) through
HIVE_AGENT_PASS_ENV's OPENAI_BASE_URL, which the adapter writes into the turn's own
CODEX_HOME/config.toml."""

from __future__ import annotations

import json
import subprocess
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from hive.agents import Turn, TurnContext, TurnStartError, start_turn
from hive.agents.codex import MAX_RETRIES
from hive.agents.conversation import Conversation
from hive.agents.launch import Launch
from hive.rules.keys import REFUSAL_OTHER, REFUSAL_QUOTA, REFUSAL_TRANSIENT, sort_refusal

from .fake_responses import INPUT_TOKENS, OUTPUT_TOKENS, FakeResponses, running

pytestmark = [pytest.mark.e2e]

ROOT = Path(__file__).resolve().parents[3]
CODEX = ROOT / ".hive" / "npm" / "node_modules" / ".bin" / "codex"
KEY = "sk-openai-fake-key-0000"
TURN_SECONDS = 60.0
# the fake's retry-after on a 429: Codex waits it out before each of its retries
RETRY_AFTER_SECONDS = 3


@pytest.fixture(scope="module")
def codex() -> Path:
    done = subprocess.run(["make", "agents"], cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0 or not CODEX.exists():
        pytest.skip(f"make agents could not install the CLIs: {done.stderr[-500:]}")
    return CODEX


@pytest.fixture(scope="module")
def api() -> Iterator[FakeResponses]:
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
    codex: Path,
    api: FakeResponses,
    worktree: Path,
    monkeypatch: pytest.MonkeyPatch,
    **changes: object,
) -> tuple[Turn, Lines]:
    monkeypatch.setenv("OPENAI_BASE_URL", api.url)
    worktree.mkdir(parents=True, exist_ok=True)
    lines = Lines()
    fields: dict[str, object] = {
        "key": KEY,
        "launch": Launch(pass_env=("OPENAI_BASE_URL",), agent_bin=str(codex)),
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
    turn = start_turn("codex", ctx)
    assert turn.wait(TURN_SECONDS + 10), "the turn did not end"
    return turn, lines


def test_a_turn_reads_thread_text_and_usage_from_the_stream(
    codex: Path, api: FakeResponses, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    api.play(("text", "hello from the fake"))
    turn, lines = run(codex, api, tmp_path / "wt", monkeypatch)
    assert turn.outcome == "finished", lines.texts()
    assert "assistant: hello from the fake" in lines.texts()
    usage = turn.usage
    assert usage is not None and usage.provider == "openai"
    assert (usage.input_tokens, usage.output_tokens) == (INPUT_TOKENS, OUTPUT_TOKENS)
    assert turn.conversation is not None and turn.conversation.agent == "codex"
    assert KEY.encode() not in turn.conversation.data
    # the Responses API, streaming, with the turn's key and the brief as the user's words
    assert api.paths == ["/v1/responses"] and api.keys == [KEY]
    assert api.requests[0]["stream"] is True
    assert "write out.txt" in json.dumps(api.requests[0]["input"])


def test_a_tool_call_from_the_model_writes_a_file_in_the_worktree(
    codex: Path, api: FakeResponses, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    worktree = tmp_path / "wt"
    api.play(("shell", "printf 'written by the tool\\n' > out.txt"))
    turn, lines = run(codex, api, worktree, monkeypatch)
    assert turn.outcome == "finished", lines.texts()
    assert (worktree / "out.txt").read_text() == "written by the tool\n"
    assert any(t.startswith("tool exec:") and "(exit 0)" in t for t in lines.texts())
    # two requests (the call, then its output), their usage added once by the CLI
    usage = turn.usage
    assert usage is not None and usage.output_tokens == 2 * OUTPUT_TOKENS


def test_a_rate_limit_is_a_transient_refusal_within_a_bound(
    codex: Path, api: FakeResponses, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    api.retry_after = RETRY_AFTER_SECONDS
    try:
        api.play(("status", 429, "requests", "rate_limit_exceeded", "Rate limit reached"))
        turn, lines = run(codex, api, tmp_path / "wt", monkeypatch)
    finally:
        api.retry_after = 0
    assert turn.outcome == "refused", lines.texts()
    assert turn.refusal is not None and sort_refusal(turn.refusal) == REFUSAL_TRANSIENT
    # Codex's own retries are bounded: the first request and MAX_RETRIES more (its
    # default is 4, each after the retry-after; how long that takes is the count's
    # retry-afters, not a clock read on a loaded machine)
    assert len(api.requests) == 1 + MAX_RETRIES


def test_an_exhausted_quota_is_a_quota_refusal(
    codex: Path, api: FakeResponses, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    api.play(
        (
            "status",
            429,
            "insufficient_quota",
            "insufficient_quota",
            "You exceeded your current quota, please check your plan and billing details.",
        )
    )
    turn, lines = run(codex, api, tmp_path / "wt", monkeypatch)
    assert turn.outcome == "refused", lines.texts()
    assert turn.refusal is not None and sort_refusal(turn.refusal) == REFUSAL_QUOTA
    assert len(api.requests) == 1, "a quota is not retried"


def reset_minute_end(resets: int) -> datetime:
    """The end of the minute of `resets` (Unix seconds): Codex prints its reset to the
    minute, and the key rests until that minute is over."""
    return datetime.fromtimestamp(resets, UTC).replace(second=0) + timedelta(minutes=1)


@pytest.mark.parametrize("zone", [None, "America/New_York", "Asia/Kathmandu"])
def test_a_usage_limit_is_a_quota_refusal_until_the_reset_codex_names(
    codex: Path,
    api: FakeResponses,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    zone: str | None,
) -> None:
    # Codex names the reset in its own zone: the machine's, or the turn's TZ
    pass_env: tuple[str, ...] = ("OPENAI_BASE_URL",)
    if zone is not None:
        monkeypatch.setenv("TZ", zone)
        pass_env += ("TZ",)
    resets = int(time.time()) + 5 * 3600
    api.play(("usage_limit", resets))
    launch = Launch(pass_env=pass_env, agent_bin=str(codex))
    turn, lines = run(codex, api, tmp_path / "wt", monkeypatch, launch=launch)
    assert turn.outcome == "refused", lines.texts()
    assert turn.refusal is not None and sort_refusal(turn.refusal) == REFUSAL_QUOTA
    assert any("try again at" in t.lower() for t in lines.texts()), lines.texts()
    assert turn.ending is not None and turn.ending.resets_at == reset_minute_end(resets)
    assert len(api.requests) == 1, "a usage limit is not retried"


def test_an_overloaded_provider_is_a_transient_refusal_within_a_bound(
    codex: Path, api: FakeResponses, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    api.play(("status", 529, "overloaded_error", "overloaded", "Overloaded"))
    turn, lines = run(codex, api, tmp_path / "wt", monkeypatch)
    assert turn.outcome == "refused", lines.texts()
    assert turn.refusal == "overloaded" and sort_refusal(turn.refusal) == REFUSAL_TRANSIENT
    # a server's error is retried per request and per stream, each bounded
    assert len(api.requests) <= (1 + MAX_RETRIES) ** 2


def test_a_refused_key_is_a_refusal_that_does_not_rest_the_key(
    codex: Path, api: FakeResponses, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    api.play(("status", 401, "invalid_request_error", "invalid_api_key", "Incorrect API key"))
    turn, lines = run(codex, api, tmp_path / "wt", monkeypatch)
    assert turn.outcome == "refused", lines.texts()
    assert turn.refusal == "authentication_failed"
    assert sort_refusal(turn.refusal) == REFUSAL_OTHER


def test_a_conversation_resumes_in_another_worktree_and_home(
    codex: Path, api: FakeResponses, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    api.play(("text", "first attempt's answer"))
    first, _ = run(codex, api, tmp_path / "runner-a" / "wt", monkeypatch)
    assert first.conversation is not None
    api.play(("text", "second attempt's answer"))
    second, lines = run(
        codex, api, tmp_path / "runner-b" / "wt", monkeypatch, resume=first.conversation
    )
    assert second.outcome == "finished", lines.texts()
    sent = json.dumps(api.requests[-1]["input"])
    assert "first attempt's answer" in sent, "the resumed request carries the earlier turn"
    assert second.conversation is not None
    assert second.conversation.session_id == first.conversation.session_id
    # the thread's total counts the first attempt again: only this attempt's is kept
    usage = second.usage
    assert usage is not None
    assert (usage.input_tokens, usage.output_tokens) == (INPUT_TOKENS, OUTPUT_TOKENS)


def test_a_conversation_that_cannot_be_restored_starts_fresh_with_a_sentence(
    codex: Path, api: FakeResponses, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = Conversation("codex", "01a22fc2-8e8d-7d32-94ff-1b124d6ee39d", b'{"not a session')
    api.play(("text", "a fresh answer"))
    turn, lines = run(codex, api, tmp_path / "wt", monkeypatch, resume=broken)
    assert turn.outcome == "finished", lines.texts()
    assert any("not restored" in t and "starting fresh" in t for t in lines.texts())
    assert turn.conversation is not None
    assert turn.conversation.session_id != broken.session_id


def test_a_huge_line_is_read_whole_and_kept_capped(
    codex: Path, api: FakeResponses, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    api.play(("huge", 300_000))
    turn, lines = run(codex, api, tmp_path / "wt", monkeypatch)
    assert turn.outcome == "finished", lines.texts()[-5:]
    assert turn.usage is not None and turn.usage.output_tokens == OUTPUT_TOKENS
    assert any(t.startswith("assistant: xxx") and t.endswith("[cut]") for t in lines.texts())


def test_a_stream_cut_mid_way_ends_the_turn_badly(
    codex: Path, api: FakeResponses, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    api.play(("cut",))
    turn, lines = run(codex, api, tmp_path / "wt", monkeypatch)
    assert turn.outcome == "ended badly", lines.texts()
    assert turn.refusal is None
    assert any("stream disconnected" in t for t in lines.texts())
    # the broken stream was retried, within the bound
    assert len(api.requests) == 1 + MAX_RETRIES


def test_a_base_url_that_is_not_http_is_refused_at_start(
    codex: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", 'http://x"\n[evil]')
    (tmp_path / "wt").mkdir()
    ctx = TurnContext(
        issue=11,
        title="t",
        body="",
        branch="queen-11",
        boundary=("out.txt",),
        brief="b",
        worktree=tmp_path / "wt",
        launch=Launch(pass_env=("OPENAI_BASE_URL",), agent_bin=str(codex)),
    )
    with pytest.raises(TurnStartError, match=r"OPENAI_BASE_URL=.* is not an http"):
        start_turn("codex", ctx)
