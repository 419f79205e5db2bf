"""What the `claude` adapter reads from a refused request's lines in Claude Code's stream
(pure; the lines are the real CLI's, 2.1.332 against the fake Messages API, cut to the
fields read; the adapter against the real CLI is tests/e2e/agents/test_claude.py)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from hive.agents.claude import read_line
from hive.rules.keys import REFUSAL_OTHER, REFUSAL_QUOTA, REFUSAL_TRANSIENT, sort_refusal

RESETS = 1796176245  # 2026-12-02T01:50:45Z
LIMIT_INFO = {
    "status": "rejected",
    "resetsAt": RESETS,
    "rateLimitType": "five_hour",
    "isUsingOverage": False,
}


def _assistant(text: str, **fields: object) -> str:
    message = {"model": "<synthetic>", "content": [{"type": "text", "text": text}]}
    return json.dumps({"type": "assistant", "message": message, **fields})


def _result(text: str, **fields: object) -> str:
    usage = {"input_tokens": 0, "output_tokens": 0}
    return json.dumps(
        {"type": "result", "subtype": "success", "is_error": True, "result": text}
        | {"usage": usage, "modelUsage": {}, "total_cost_usd": 0}
        | fields
    )


def test_an_accounts_usage_limit_is_a_quota_resetting_when_its_limit_info_says() -> None:
    seen = read_line(
        _assistant(
            "You've hit your 5-hour limit · resets 1:50am (UTC)",
            error="rate_limit",
            is_api_error_message=True,
            api_error_status=429,
            api_error="usage_limit_reached",
            api_error_params={"rate_limit_info": LIMIT_INFO},
            api_error_type="rate_limit_error",
        )
    )
    assert seen.refusal == "quota" and sort_refusal(seen.refusal) == REFUSAL_QUOTA
    assert seen.resets_at == datetime(2026, 12, 2, 1, 50, 45, tzinfo=UTC)
    assert seen.lines == ("assistant: You've hit your 5-hour limit · resets 1:50am (UTC)",)


def test_a_usage_limit_without_its_limit_info_is_a_quota_without_a_reset() -> None:
    seen = read_line(_assistant("limit", error="rate_limit", api_error="usage_limit_reached"))
    assert (seen.refusal, seen.resets_at) == ("quota", None)
    garbled = {"rate_limit_info": {**LIMIT_INFO, "resetsAt": "soon"}}
    seen = read_line(
        _assistant(
            "limit", error="rate_limit", api_error="usage_limit_reached", api_error_params=garbled
        )
    )
    assert (seen.refusal, seen.resets_at) == ("quota", None)
    result = read_line(_result("limit", api_error_status=429, api_error="usage_limit_reached"))
    assert (result.refusal, result.resets_at) == ("quota", None)


def test_a_plain_rate_limit_stays_transient_without_a_reset() -> None:
    seen = read_line(
        _assistant(
            "API Error: Request rejected (429) · This request would exceed your account's rate"
            " limit. Please try again later.",
            error="rate_limit",
            is_api_error_message=True,
            api_error_status=429,
            api_error_type="rate_limit_error",
        )
    )
    assert seen.refusal == "rate_limit" and sort_refusal(seen.refusal) == REFUSAL_TRANSIENT
    assert seen.resets_at is None


def test_a_keys_spend_limit_is_a_quota_until_the_access_it_names() -> None:
    text = (
        "API Error: 400 You have reached your specified API usage limits. You will regain"
        " access on 2026-12-02 at 00:00 UTC."
    )
    for line in (
        _assistant(
            text,
            error="unknown",
            is_api_error_message=True,
            api_error_status=400,
            api_error_type="invalid_request_error",
        ),
        _result(text, api_error_status=400, api_error_type="invalid_request_error"),
    ):
        seen = read_line(line)
        assert seen.refusal == "quota"
        assert seen.resets_at == datetime(2026, 12, 2, tzinfo=UTC)


def test_claude_code_1x_usage_limit_text_is_a_quota_resetting_at_its_epoch() -> None:
    seen = read_line(_result("Claude AI usage limit reached|1760000400"))
    assert seen.refusal == "quota"
    assert seen.resets_at == datetime(2025, 10, 9, 9, 0, tzinfo=UTC)


def test_a_model_quoting_the_words_is_no_refusal() -> None:
    said = "Claude AI usage limit reached|1760000400 is how 1.x said it"
    assert read_line(_assistant(said)).refusal is None
    finished = read_line(_result(said, is_error=False))
    assert finished.refusal is None and finished.resets_at is None
    other = read_line(_assistant("no", error="authentication_failed"))
    assert other.refusal == "authentication_failed"
    assert sort_refusal(other.refusal) == REFUSAL_OTHER and other.resets_at is None
