"""rules/reported: the figures and names an agent reports about itself are bounded
(issue 25)."""

from __future__ import annotations

import pytest

from hive.rules.reported import (
    COST_USD_MAX,
    NAME_MAX_CHARS,
    TOKENS_MAX,
    TURN_COST_USD_MAX,
    TURN_TOKENS_MAX,
    added_cost,
    added_tokens,
    cost_usd,
    cost_usd_text,
    reported_name,
    token_count,
    token_count_text,
)


def test_the_bounds_fit_a_bigint_with_room() -> None:
    assert TOKENS_MAX <= TURN_TOKENS_MAX < 2**63 - 1
    assert COST_USD_MAX <= TURN_COST_USD_MAX


@pytest.mark.parametrize("value", [0, 1, 1200, TOKENS_MAX])
def test_a_plain_count_is_a_count(value: int) -> None:
    assert token_count(value) == value
    assert token_count_text(str(value)) == value


@pytest.mark.parametrize(
    "value", [-1, TOKENS_MAX + 1, 10**20, True, False, 2.0, float("nan"), "7", None]
)
def test_a_count_no_turn_can_have_is_none(value: object) -> None:
    assert token_count(value) is None


@pytest.mark.parametrize(
    "text", ["²", "٣", "1²", "", "-1", "+1", " 1", "1e3", "99999999999999999999", "1000000000001"]
)
def test_text_that_is_not_ascii_digits_within_the_bound_is_no_count(text: str) -> None:
    assert token_count_text(text) is None


@pytest.mark.parametrize("value", [0, 0.0, 0.0125, 3, COST_USD_MAX])
def test_a_plain_cost_is_a_cost(value: float) -> None:
    assert cost_usd(value) == value


@pytest.mark.parametrize(
    "value", [float("nan"), float("inf"), -0.01, -1, COST_USD_MAX * 2, 1e300, True, "0.5"]
)
def test_a_cost_no_turn_can_have_is_none(value: object) -> None:
    assert cost_usd(value) is None


@pytest.mark.parametrize(
    ("text", "cost"), [("0.0125", 0.0125), ("3", 3.0), ("100000", 100000.0), ("100001", None)]
)
def test_a_cost_in_text_is_a_plain_decimal_within_the_bound(text: str, cost: float | None) -> None:
    assert cost_usd_text(text) == cost


@pytest.mark.parametrize("text", ["nan", "inf", "-1", "1e3", "1.", ".5", "1,5", "²"])
def test_other_text_is_no_cost(text: str) -> None:
    assert cost_usd_text(text) is None


def test_a_name_is_short_text_without_controls() -> None:
    assert reported_name("claude-x") == "claude-x"
    assert reported_name("m" * NAME_MAX_CHARS) == "m" * NAME_MAX_CHARS
    for bad in ("", "m" * (NAME_MAX_CHARS + 1), "a\x00b", "a\x1b]52;c;x\x07", 5, None):
        assert reported_name(bad) is None


def test_a_turns_sums_stop_at_their_bounds() -> None:
    assert added_tokens(2, 3) == 5
    assert added_tokens(TURN_TOKENS_MAX, TOKENS_MAX) == TURN_TOKENS_MAX
    assert added_cost(0.5, 0.25) == 0.75
    assert added_cost(TURN_COST_USD_MAX, COST_USD_MAX) == TURN_COST_USD_MAX
