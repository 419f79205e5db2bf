"""What an agent may report on stdout: refusals and usage."""

from __future__ import annotations

import re

import pytest

from hive.agents.protocol import (
    REFUSAL_KINDS,
    ProtocolError,
    Usage,
    parse_refusal_line,
    parse_usage,
)
from hive.rules.keys import REFUSAL_QUOTA, REFUSAL_TRANSIENT, sort_refusal


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        ("HIVE-REFUSAL: quota", "quota"),
        ("HIVE-REFUSAL:rate_limit", "rate_limit"),
        ("HIVE-REFUSAL:  Overloaded  ", "overloaded"),
        ("HIVE-REFUSAL: 429", "429"),
        ("HIVE-REFUSAL: insufficient_quota", "insufficient_quota"),
        ("hive-refusal: quota", None),
        (" HIVE-REFUSAL: quota", None),
        ("the provider said HIVE-REFUSAL: quota", None),
    ],
)
def test_a_refusal_line_names_its_kind(line: str, kind: str | None) -> None:
    found = parse_refusal_line(line)
    assert (None if found is None else found.kind) == kind


@pytest.mark.parametrize(
    "line",
    ["HIVE-REFUSAL:", "HIVE-REFUSAL: two words", "HIVE-REFUSAL: no!", "HIVE-REFUSAL: " + "q" * 65],
)
def test_a_refusal_that_is_not_one_word_is_a_protocol_error(line: str) -> None:
    with pytest.raises(ProtocolError, match="expected one word such as quota, rate_limit"):
        parse_refusal_line(line)


def test_the_preferred_refusal_words_sort_as_the_keys_rule_expects() -> None:
    assert [sort_refusal(kind) for kind in REFUSAL_KINDS] == [
        REFUSAL_QUOTA,
        REFUSAL_TRANSIENT,
        REFUSAL_TRANSIENT,
    ]


def test_a_usage_line_reads_every_field() -> None:
    line = "HIVE-USAGE: provider=anthropic model=claude-x input=1200 output=300"
    assert parse_usage(line) == Usage("anthropic", "claude-x", 1200, 300)


def test_usage_fields_are_optional() -> None:
    assert parse_usage("HIVE-USAGE: output=5") == Usage(None, None, 0, 5)
    assert parse_usage("USAGE: output=5") is None


@pytest.mark.parametrize(
    "line",
    [
        "HIVE-USAGE: input=many",
        "HIVE-USAGE: cost=3",
        "HIVE-USAGE: input=1 input=2",
        "HIVE-USAGE: model=",
        "HIVE-USAGE: output=-1",
    ],
)
def test_a_malformed_usage_line_is_a_protocol_error(line: str) -> None:
    with pytest.raises(ProtocolError):
        parse_usage(line)


def test_usage_adds_tokens_and_keeps_the_latest_names() -> None:
    first = Usage("anthropic", "m1", 10, 2)
    assert first.plus(Usage(None, "m2", 5, 1)) == Usage("anthropic", "m2", 15, 3)


def test_a_refusal_may_say_when_the_key_works_again() -> None:
    from datetime import UTC, datetime

    from hive.agents.protocol import Refusal, parse_refusal_line

    reset = datetime(2026, 12, 1, 5, 0, tzinfo=UTC)
    assert parse_refusal_line("HIVE-REFUSAL: quota resets=1796101200") == Refusal(
        "quota", datetime.fromtimestamp(1796101200, UTC)
    )
    assert parse_refusal_line("HIVE-REFUSAL: quota resets=2026-12-01T05:00:00Z") == Refusal(
        "quota", reset
    )
    assert parse_refusal_line("HIVE-REFUSAL: Quota resets=2026-12-01T06:00:00+01:00") == Refusal(
        "quota", reset
    )
    assert parse_refusal_line("HIVE-REFUSAL: rate_limit") == Refusal("rate_limit", None)
    assert parse_refusal_line("plain text") is None


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ("HIVE-REFUSAL: quota resets=tomorrow", "resets='tomorrow' is not a time"),
        ("HIVE-REFUSAL: quota resets=2026-12-01T05:00:00", "with its zone"),
        ("HIVE-REFUSAL: quota resets=", "resets='' is not a time"),
        ("HIVE-REFUSAL: quota later=1", "expected one word such as quota"),
        ("HIVE-REFUSAL: quota resets=1 more", "expected one word such as quota"),
    ],
)
def test_a_bad_reset_time_is_a_protocol_error(line: str, says: str) -> None:
    from hive.agents.protocol import parse_refusal_line

    with pytest.raises(ProtocolError, match=re.escape(says)):
        parse_refusal_line(line)


def test_a_usage_line_may_carry_the_agents_own_cost() -> None:
    usage = parse_usage("HIVE-USAGE: provider=acme model=m1 input=10 output=20 cost_usd=0.0125")
    assert usage == Usage("acme", "m1", 10, 20, 0.0125)
    assert usage.plus(Usage(cost_usd=0.5)).cost_usd == 0.5125


@pytest.mark.parametrize("cost", ["-1", "1e3", "nan", "0x10", "1.", ".5", "1,5"])
def test_a_cost_that_is_not_plain_dollars_is_a_protocol_error(cost: str) -> None:
    with pytest.raises(ProtocolError, match="is not a cost: expected US dollars"):
        parse_usage(f"HIVE-USAGE: cost_usd={cost}")
