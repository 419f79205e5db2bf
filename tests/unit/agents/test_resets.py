"""When the agent CLIs say a refused key works again (hive/agents/resets.py), read from
the exact words they print, and what the key's rest makes of it (hive/rules/rests.py)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from hive.agents.protocol import Refusal
from hive.agents.resets import (
    epoch_reset,
    spend_limit_refusal,
    try_again_reset,
    usage_limit_refusal,
)
from hive.rules.outcome_codes import OutcomeCode
from hive.rules.rests import NO_REST, KeyEnding, rest_after

AT = datetime(2026, 12, 1, 20, 50, tzinfo=UTC)  # when the refusal lands
QUOTA_REST_SECONDS = 3600


def rests_until(resets_at: datetime | None) -> datetime | None:
    """Until when a quota refusal with `resets_at`, landing at AT, rests its key."""
    return rest_after(
        NO_REST, KeyEnding(OutcomeCode.QUOTA_EXHAUSTED, resets_at, QUOTA_REST_SECONDS), AT
    ).until


def test_a_good_epoch_is_its_time_whether_a_number_or_its_digits() -> None:
    assert epoch_reset(1796176245) == datetime(2026, 12, 2, 1, 50, 45, tzinfo=UTC)
    assert epoch_reset("1796176245") == datetime(2026, 12, 2, 1, 50, 45, tzinfo=UTC)
    assert epoch_reset(1796176245.4) == datetime(2026, 12, 2, 1, 50, 45, tzinfo=UTC)


@pytest.mark.parametrize(
    "value",
    [None, "", "soon", "17961762x5", "-5", -5, True, float("nan"), float("inf"), [1796176245]],
)
def test_a_missing_or_garbled_epoch_is_no_time(value: object) -> None:
    assert epoch_reset(value) is None


@pytest.mark.parametrize("value", [1e20, "99999999999999999999", 1796176245000])
def test_an_epoch_no_calendar_holds_is_no_time(value: object) -> None:
    # milliseconds, or a number past the year 9999
    assert epoch_reset(value) is None


def test_claude_code_1x_usage_limit_text_is_a_quota_resetting_at_its_epoch() -> None:
    assert usage_limit_refusal("Claude AI usage limit reached|1760000400") == Refusal(
        "quota", datetime(2025, 10, 9, 9, 0, tzinfo=UTC)
    )
    assert usage_limit_refusal("API Error: Claude AI usage limit reached|1760000400") == Refusal(
        "quota", datetime(2025, 10, 9, 9, 0, tzinfo=UTC)
    )


@pytest.mark.parametrize(
    "text",
    [
        "Claude AI usage limit reached",
        "Claude AI usage limit reached|",
        "Claude AI usage limit reached|soon",
        "Claude AI usage limit reached|99999999999999999999",
    ],
)
def test_a_usage_limit_text_without_a_good_epoch_is_a_quota_without_a_reset(text: str) -> None:
    assert usage_limit_refusal(text) == Refusal("quota", None)


def test_other_text_is_no_usage_limit() -> None:
    assert usage_limit_refusal("API Error: Request rejected (429) · slow down") is None
    assert usage_limit_refusal("") is None


def test_a_reset_within_the_week_rests_the_key_until_then() -> None:
    refusal = usage_limit_refusal("Claude AI usage limit reached|1796176245")
    assert refusal is not None and refusal.resets_at is not None
    assert rests_until(refusal.resets_at) == datetime(2026, 12, 2, 1, 50, 45, tzinfo=UTC)


def test_an_epoch_in_the_past_rests_the_configured_quota_rest() -> None:
    refusal = usage_limit_refusal("Claude AI usage limit reached|1700000000")
    assert refusal is not None and refusal.resets_at == datetime(
        2023, 11, 14, 22, 13, 20, tzinfo=UTC
    )
    assert rests_until(refusal.resets_at) == AT + timedelta(seconds=QUOTA_REST_SECONDS)


def test_an_epoch_absurdly_far_ahead_is_not_believed_the_rest_is_capped() -> None:
    refusal = usage_limit_refusal("Claude AI usage limit reached|4102444800")  # 2100
    assert refusal is not None and refusal.resets_at == datetime(2100, 1, 1, tzinfo=UTC)
    assert rests_until(refusal.resets_at) == AT + timedelta(seconds=QUOTA_REST_SECONDS)
    assert rests_until(None) == AT + timedelta(seconds=QUOTA_REST_SECONDS)


SPEND_LIMIT = (
    "API Error: 400 You have reached your specified API usage limits. You will regain access"
    " on 2026-12-02 at 00:00 UTC."
)


def test_the_apis_spend_limit_is_a_quota_until_the_access_it_names() -> None:
    assert spend_limit_refusal(SPEND_LIMIT) == Refusal(
        "quota", datetime(2026, 12, 2, 0, 0, tzinfo=UTC)
    )
    assert spend_limit_refusal("You have reached your specified API usage limits.") == Refusal(
        "quota", None
    )
    garbled = SPEND_LIMIT.replace("2026-12-02", "2026-02-30")
    assert spend_limit_refusal(garbled) == Refusal("quota", None)
    assert spend_limit_refusal("Your credit balance is too low") is None


CODEX_DATED = (
    "You’ve hit your usage limit. Visit https://chatgpt.com/settings/usage to purchase more"
    " credits or try again at Dec 2nd, 2026 1:49 AM."
)


def test_codexs_dated_reset_is_the_end_of_the_minute_it_names_in_its_zone() -> None:
    assert try_again_reset(CODEX_DATED, AT, UTC) == datetime(2026, 12, 2, 1, 50, tzinfo=UTC)
    kathmandu = ZoneInfo("Asia/Kathmandu")  # UTC+05:45
    assert try_again_reset(CODEX_DATED, AT, kathmandu) == datetime(2026, 12, 1, 20, 5, tzinfo=UTC)


def test_codexs_reset_without_a_date_is_on_todays_date_in_its_zone() -> None:
    new_york = ZoneInfo("America/New_York")  # AT is 15:50 there, on Dec 1st
    message = "You’ve hit your usage limit. Try again at 8:51 PM."
    assert try_again_reset(message, AT, new_york) == datetime(2026, 12, 2, 1, 52, tzinfo=UTC)
    assert try_again_reset("try again at 12:30 AM.", AT, UTC) == datetime(
        2026, 12, 1, 0, 31, tzinfo=UTC
    )
    assert try_again_reset("try again at 12:05 PM.", AT, UTC) == datetime(
        2026, 12, 1, 12, 6, tzinfo=UTC
    )


@pytest.mark.parametrize(
    "message",
    [
        "You’ve hit your usage limit. Try again later.",
        "You’ve hit your usage limit. or try again later.",
        "try again at 13:05 PM.",
        "try again at 1:75 AM.",
        "try again at Feb 30th, 2027 1:00 AM.",
        "try again at Foo 2nd, 2026 1:49 AM.",
        "Quota exceeded. Check your plan and billing details.",
    ],
)
def test_codex_naming_no_real_time_gives_no_reset(message: str) -> None:
    assert try_again_reset(message, AT, UTC) is None
