"""rules/deliveries: GitHub's deliveries are not trusted for order (issue 25, item 6)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from hive.rules.deliveries import (
    ORIGIN_GITHUB,
    ORIGIN_HIVE,
    delivery_id,
    forge_time,
    github_may_follow,
    is_stale,
    taken_sentence,
)

T1 = datetime(2026, 12, 2, 5, 0, tzinfo=UTC)
T2 = datetime(2026, 12, 2, 5, 1, tzinfo=UTC)


def test_a_delivery_id_is_githubs_guid_trimmed() -> None:
    guid = "72d3162e-cc78-11e3-81ab-4c9367dc0958"
    assert delivery_id(guid) == guid and delivery_id(f" {guid} ") == guid


@pytest.mark.parametrize("header", [None, "", "a b", "x" * 101, "-leading", "a\x1bb", "é"])
def test_a_header_that_is_no_id_is_not_remembered(header: str | None) -> None:
    assert delivery_id(header) is None


def test_githubs_updated_at_is_a_utc_time() -> None:
    assert forge_time("2026-12-02T05:00:00Z") == T1
    assert forge_time("2026-12-02T06:00:00+01:00") == T1


@pytest.mark.parametrize(
    "value",
    [None, 5, "", "yesterday", "2026-12-02T05:00:00", "9999-12-31T23:59:59-01:00", "9" * 41],
)
def test_anything_else_is_no_time(value: object) -> None:
    assert forge_time(value) is None


def test_only_an_older_payload_than_the_one_followed_is_stale() -> None:
    assert is_stale(T2, T1)
    assert not is_stale(T1, T2)
    assert not is_stale(T1, T1)  # two changes may share a second
    assert not is_stale(None, T1) and not is_stale(T1, None)


def test_githubs_issue_never_changes_the_hives_own() -> None:
    assert not github_may_follow(ORIGIN_HIVE)
    assert github_may_follow(ORIGIN_GITHUB) and github_may_follow(None)
    assert "the hive's own issue #8" in taken_sentence(8)
