"""What an agent may report on stdout: refusals and usage."""

from __future__ import annotations

import pytest

from hive.agents.protocol import (
    REFUSAL_KINDS,
    ProtocolError,
    Usage,
    parse_refusal,
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
    assert parse_refusal(line) == kind


@pytest.mark.parametrize(
    "line",
    ["HIVE-REFUSAL:", "HIVE-REFUSAL: two words", "HIVE-REFUSAL: no!", "HIVE-REFUSAL: " + "q" * 65],
)
def test_a_refusal_that_is_not_one_word_is_a_protocol_error(line: str) -> None:
    with pytest.raises(ProtocolError, match="expected one word such as quota, rate_limit"):
        parse_refusal(line)


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
