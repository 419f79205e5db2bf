"""The benchmarks' option types: a number in range, or one argparse error naming the
value and the range."""

from __future__ import annotations

import argparse

import pytest

from hive.bench.arguments import seconds, whole


def test_whole_takes_its_range_inclusive() -> None:
    parse = whole(1, 20)
    assert (parse("1"), parse("20")) == (1, 20)


@pytest.mark.parametrize("raw", ["0", "21", "-5", "2.5", "many", ""])
def test_whole_refuses_what_is_not_a_whole_number_in_range(raw: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match="is not a whole number from 1 to 20"):
        whole(1, 20)(raw)


def test_seconds_takes_fractions_in_range() -> None:
    parse = seconds(0.5, 600)
    assert (parse("0.5"), parse("3"), parse("600")) == (0.5, 3.0, 600.0)


@pytest.mark.parametrize("raw", ["0.4", "601", "nan", "inf", "soon"])
def test_seconds_refuses_what_is_not_a_number_in_range(raw: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match=r"seconds from 0\.5 to 600"):
        seconds(0.5, 600)(raw)
