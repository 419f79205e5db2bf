"""`hive bench scale`'s options: defaults, ranges, and runners that cannot fit the
server's max_connections refused before anything starts."""

from __future__ import annotations

import argparse

import pytest

from hive.bench import scale
from hive.errors import HiveError
from hive.settings import Settings


def parser() -> argparse.ArgumentParser:
    made = argparse.ArgumentParser(prog="hive bench scale", exit_on_error=False)
    scale.add_arguments(made)
    return made


def test_the_defaults_are_sixty_four_runners_within_two_hundred_connections() -> None:
    args = parser().parse_args([])
    assert (args.runners, args.max_connections, args.orders, args.rate) == (64, 200, 256, 4)
    assert args.keep is False


def test_a_quick_run_takes_fewer_runners_and_orders() -> None:
    args = parser().parse_args(["--runners", "4", "--orders", "20", "--rate", "2"])
    assert (args.runners, args.orders, args.rate) == (4, 20, 2)


@pytest.mark.parametrize(
    ("option", "raw"),
    [("--runners", "0"), ("--runners", "1001"), ("--orders", "0"), ("--rate", "x")],
)
def test_a_value_out_of_range_is_one_argparse_error(option: str, raw: str) -> None:
    with pytest.raises(argparse.ArgumentError, match="is not a whole number from"):
        parser().parse_args([option, raw])


def test_runners_beyond_max_connections_are_refused_before_anything_starts() -> None:
    args = parser().parse_args(["--runners", "64", "--max-connections", "100"])
    with pytest.raises(HiveError, match="raise --max-connections or lower --runners"):
        scale.run(args, Settings.from_env({}))
