"""`hive bench peers`'s options, and the one line it says when the bench extra is not
installed."""

from __future__ import annotations

import argparse

import pytest

from hive.bench import peers
from hive.errors import UsageError
from hive.settings import Settings


def parser() -> argparse.ArgumentParser:
    made = argparse.ArgumentParser(prog="hive bench peers", exit_on_error=False)
    peers.add_arguments(made)
    return made


def test_the_defaults_are_eight_workers_at_batch_one_and_ten() -> None:
    args = parser().parse_args([])
    assert (args.workers, args.batch, args.jobs) == (8, 10, 4000)
    assert (args.samples, args.rate, args.window) == (100, 20, 3.0)


@pytest.mark.parametrize(
    ("option", "raw", "says"),
    [
        ("--workers", "0", "whole number from 1 to 64"),
        ("--batch", "1", "whole number from 2 to 100"),
        ("--samples", "many", "whole number from 1 to 10000"),
        ("--window", "0.5", "seconds from 1 to 600"),
    ],
)
def test_a_value_out_of_range_is_one_argparse_error(option: str, raw: str, says: str) -> None:
    with pytest.raises(argparse.ArgumentError, match=says):
        parser().parse_args([option, raw])


def test_without_the_bench_extra_it_names_what_is_missing_and_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(peers, "PEERS", ("pgqueuer", "no_such_queue_library"))
    with pytest.raises(UsageError) as caught:
        peers.run(parser().parse_args([]), Settings.from_env({}))
    message = str(caught.value)
    assert "pip install 'hive[bench]'" in message
    assert "missing: no_such_queue_library" in message and "\n" not in message
