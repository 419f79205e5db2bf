"""What the `codex` adapter reads from Codex CLI's stream and session files (pure
functions; the adapter against the real CLI is tests/e2e/agents/test_codex.py)."""

from __future__ import annotations

import json
import zoneinfo
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from hive.agents.base import TurnStartError
from hive.agents.codex import (
    MAX_RETRIES,
    codex_zone,
    config_toml,
    earlier_total,
    last_model,
    read_line,
    refusal_of,
    session_path,
)
from hive.agents.protocol import Usage
from hive.rules.keys import REFUSAL_OTHER, REFUSAL_QUOTA, REFUSAL_TRANSIENT, sort_refusal

THREAD = "01a22fc2-8e8d-7d32-94ff-1b124d6ee39d"


@pytest.mark.parametrize(
    ("message", "word", "sorted_as"),
    [
        ("Quota exceeded. Check your plan and billing details.", "quota", REFUSAL_QUOTA),
        ("You've hit your usage limit. Upgrade to Pro", "quota", REFUSAL_QUOTA),
        (
            "exceeded retry limit, last status: 429 Too Many Requests",
            "rate_limit",
            REFUSAL_TRANSIENT,
        ),
        ("rate limit exceeded: Rate limit reached for gpt", "rate_limit", REFUSAL_TRANSIENT),
        (
            "Selected model is at capacity. Please try a different model.",
            "overloaded",
            REFUSAL_TRANSIENT,
        ),
        (
            "unexpected status 529 <unknown status code>: Overloaded, url: x",
            "overloaded",
            REFUSAL_TRANSIENT,
        ),
        (
            "unexpected status 401 Unauthorized: Incorrect API key, url: x",
            "authentication_failed",
            REFUSAL_OTHER,
        ),
    ],
)
def test_a_refused_request_is_sorted_by_its_message(
    message: str, word: str, sorted_as: int
) -> None:
    assert refusal_of(message) == word
    assert sort_refusal(word) == sorted_as


def test_a_failure_that_is_no_refusal_has_no_word() -> None:
    assert refusal_of("stream disconnected before completion: Transport error") is None
    assert refusal_of("unexpected status 500 Internal Server Error: boom") is None


def test_the_stream_gives_the_thread_text_and_the_final_usage_once() -> None:
    started = json.dumps({"type": "thread.started", "thread_id": THREAD})
    assert read_line(started).thread_id == THREAD
    assert read_line('{"type":"thread.started","thread_id":"../x"}').thread_id is None
    said = read_line('{"type":"item.completed","item":{"type":"agent_message","text":"a\\nb"}}')
    assert said.lines == ("assistant: a", "assistant: b") and said.total is None
    done = read_line(
        '{"type":"turn.completed","usage":{"input_tokens":7,"cached_input_tokens":3,'
        '"output_tokens":2}}'
    )
    assert done.total == Usage("openai", None, 7, 2)
    failed = read_line('{"type":"turn.failed","error":{"message":"Quota exceeded."}}')
    assert failed.refusal == "quota"
    assert read_line("not json").lines == ("not json",)
    assert read_line("[1]").lines == ("[1]",)


USAGE_LIMIT = (
    "You’ve hit your usage limit. Visit https://chatgpt.com/settings/usage to purchase more"
    " credits or try again at {}."
)
NOW = datetime(2026, 12, 1, 20, 49, 25, tzinfo=UTC)


def _failed(message: str) -> str:
    return json.dumps({"type": "turn.failed", "error": {"message": message}})


def test_a_usage_limits_reset_is_read_in_codexs_zone_to_the_end_of_its_minute() -> None:
    # the real CLI's line for a reset at 2026-12-02T01:49:24Z, its zone UTC
    dated = read_line(_failed(USAGE_LIMIT.format("Dec 2nd, 2026 1:49 AM")), NOW, UTC)
    assert dated.refusal == "quota" and sort_refusal(dated.refusal) == REFUSAL_QUOTA
    assert dated.resets_at == datetime(2026, 12, 2, 1, 50, tzinfo=UTC)
    # the same reset with TZ=America/New_York: the same day there, so no date
    today = read_line(_failed(USAGE_LIMIT.format("8:49 PM")), NOW, ZoneInfo("America/New_York"))
    assert today.resets_at == datetime(2026, 12, 2, 1, 50, tzinfo=UTC)


def test_a_failure_names_no_reset_without_a_known_zone_or_a_refusal() -> None:
    unknown = read_line(_failed(USAGE_LIMIT.format("8:49 PM")), NOW, None)
    assert (unknown.refusal, unknown.resets_at) == ("quota", None)
    later = read_line(_failed("You’ve hit your usage limit. Try again later."), NOW, UTC)
    assert (later.refusal, later.resets_at) == ("quota", None)
    other = read_line(_failed("stream disconnected: try again at 8:49 PM."), NOW, UTC)
    assert (other.refusal, other.resets_at) == (None, None)


def test_codexs_zone_is_the_turns_tz_else_the_machines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert codex_zone({"TZ": "Asia/Kathmandu"}) == ZoneInfo("Asia/Kathmandu")
    assert codex_zone({"TZ": ":Europe/Paris"}) == ZoneInfo("Europe/Paris")
    assert codex_zone({"TZ": "CET-1CEST"}) is None  # a POSIX rule: not read
    assert codex_zone({"TZ": "/etc/localtime"}) is None
    found = [Path(d, "Asia", "Tokyo") for d in zoneinfo.TZPATH if Path(d, "Asia", "Tokyo").exists()]
    if not found:
        pytest.skip("no system time zone files to stand for the machine's zone")
    local = tmp_path / "localtime"
    local.write_bytes(found[0].read_bytes())
    monkeypatch.setattr("hive.agents.codex.LOCALTIME", local)
    tokyo = codex_zone({})
    assert tokyo is not None and tokyo.utcoffset(NOW).total_seconds() == 9 * 3600
    monkeypatch.setattr("hive.agents.codex.LOCALTIME", tmp_path / "absent")
    assert codex_zone({}) == UTC


def _session(*records: dict[str, object]) -> bytes:
    meta = {
        "timestamp": "2026-12-01T04:00:09.391Z",
        "type": "session_meta",
        "payload": {"id": THREAD, "timestamp": "2026-12-01T04:00:09.362Z"},
    }
    return b"\n".join(json.dumps(r).encode() for r in (meta, *records)) + b"\n"


def test_a_session_goes_back_under_its_date_and_a_foreign_one_is_refused() -> None:
    data = _session()
    assert session_path(data, THREAD) == Path(
        "sessions", "2026", "12", "01", f"rollout-2026-12-01T04-00-09-{THREAD}.jsonl"
    )
    with pytest.raises(ValueError, match="not"):
        session_path(data, "another-thread")
    with pytest.raises(ValueError, match="not JSON"):
        session_path(b'{"broken', THREAD)
    with pytest.raises(ValueError, match="meta"):
        session_path(b'{"type":"response_item"}\n', THREAD)


def test_a_resumed_threads_earlier_usage_and_model_are_read_from_its_file() -> None:
    def count(i: int, o: int) -> dict[str, object]:
        usage = {"input_tokens": i, "output_tokens": o}
        return {
            "type": "event_msg",
            "payload": {"type": "token_count", "info": {"total_token_usage": usage}},
        }

    data = _session(
        {"type": "turn_context", "payload": {"model": "gpt-a"}},
        count(100, 20),
        {"type": "event_msg", "payload": {"type": "token_count", "info": None}},
        {"type": "turn_context", "payload": {"model": "gpt-b"}},
        count(250, 45),
    )
    assert earlier_total(data) == Usage("openai", None, 250, 45)
    assert last_model(data) == "gpt-b"
    assert earlier_total(_session()) == Usage("openai", None, 0, 0)
    assert last_model(_session()) is None


def test_the_config_names_the_key_variable_never_the_key_and_bounds_retries() -> None:
    text = config_toml("http://127.0.0.1:9/v1")
    assert 'base_url = "http://127.0.0.1:9/v1"' in text
    assert 'env_key = "OPENAI_API_KEY"' in text
    assert f"request_max_retries = {MAX_RETRIES}" in text
    assert f"stream_max_retries = {MAX_RETRIES}" in text


@pytest.mark.parametrize(
    "url", ["ftp://x/v1", "127.0.0.1:9", "", 'http://x"\n[evil]', "http://[bad", "http:///v1"]
)
def test_a_base_url_that_is_not_http_is_a_one_line_start_error(url: str) -> None:
    with pytest.raises(TurnStartError, match=r"^OPENAI_BASE_URL=.* is not an http\(s\) URL"):
        config_toml(url)
