"""`hive chaos`: each bad argument is one clear line and a non-zero exit, before any
server or process starts; a directory that is not a chaos run's own is never cleared."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from hive.cli import build_parser
from hive.commands.chaos import replay
from hive.swarm import clean_environment


def hive_chaos(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hive", "chaos", *args],
        env=clean_environment({}),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--orders", "0"], "'0' is not a number of orders from 1 to 2000"),
        (["--orders", "١٢"], "'١٢' is not a number of orders from 1 to 2000"),
        (["--runners", "17"], "'17' is not a number of runners from 1 to 16"),
        (["--seed", "-3"], "'-3' is not a seed from 0 to"),
        (["--minutes", "0.1"], "'0.1' is not a number of minutes from 0.5 to 120"),
        (["--minutes", "nan"], "'nan' is not a number of minutes from 0.5 to 120"),
        (["--size", "huge"], "invalid choice: 'huge'"),
        (["--forge", "gitlab"], "invalid choice: 'gitlab'"),
    ],
)
def test_a_bad_argument_is_one_line_and_exit_2(args: list[str], says: str) -> None:
    done = hive_chaos(*args)
    assert done.returncode == 2
    assert says in done.stderr.strip().splitlines()[-1]


def test_minutes_belong_to_the_big_run(tmp_path: Path) -> None:
    done = hive_chaos("--size", "small", "--minutes", "2", "--dir", str(tmp_path / "c"))
    assert done.returncode == 1
    assert done.stderr.strip() == (
        "hive: --minutes is for --size big; a small run's faults fall in 25 s"
    )
    assert not (tmp_path / "c").exists()


def test_a_directory_that_is_not_a_chaos_run_s_own_is_refused(tmp_path: Path) -> None:
    (tmp_path / "mine.txt").write_text("keep me\n")
    done = hive_chaos("--size", "small", "--dir", str(tmp_path))
    assert done.returncode == 1
    assert done.stderr.strip() == (
        f"hive: {tmp_path} exists and is not a hive chaos directory: choose another --dir"
    )
    assert (tmp_path / "mine.txt").read_text() == "keep me\n"


@pytest.mark.parametrize(
    "args",
    [
        ["chaos"],
        ["chaos", "--size", "big", "--orders", "60", "--runners", "3", "--minutes", "1.5"],
        ["chaos", "--loop", "--orders", "20"],
        ["chaos", "--forge", "github", "--orders", "8"],
    ],
)
def test_the_replay_line_runs_the_same_shape_again(args: list[str]) -> None:
    parsed = build_parser().parse_args(args)
    again = build_parser().parse_args(replay(parsed, 27).split()[1:])
    assert again.seed == 27
    for flag in ("size", "orders", "runners", "minutes", "loop", "forge"):
        assert getattr(again, flag) == getattr(parsed, flag), flag
