"""`hive drain-plan`: the drain card as a command, run as a user runs it."""

import json
import subprocess
import sys

import pytest


def hive(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hive", "drain-plan", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def rows(stdout: str) -> dict[str, tuple[str, str]]:
    """The table's kind rows as {kind: (now, at the cap)}."""
    table: dict[str, tuple[str, str]] = {}
    for line in stdout.splitlines():
        kind, _, rest = line.partition("  ")
        if kind.strip() in {"bee", "review", "round", "job", "wait"}:
            now, at_cap = (cell.strip() for cell in rest.strip().split("  ", 1))
            table[kind.strip()] = (now, at_cap)
    return table


def test_todays_drain_holds_a_bee_to_1800_s_and_hands_it_back_there() -> None:
    done = hive("--runner-drain", "1800", "--platform-drain", "1830")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("cap       1800 s (the runner's drain")
    assert "waited    0 s" in done.stdout
    assert rows(done.stdout) == {
        "bee": ("hold", "hand back"),
        "review": ("stop", "stop"),
        "round": ("leave", "leave"),
        "job": ("leave", "leave"),
        "wait": ("leave", "leave"),
    }


def test_dragging_the_wait_to_the_cap_changes_the_bees_row() -> None:
    before = hive("--runner-drain", "1800", "--platform-drain", "1830", "--waited", "1799")
    at = hive("--runner-drain", "1800", "--platform-drain", "1830", "--waited", "1800")
    assert rows(before.stdout)["bee"] == ("hold", "hand back")
    assert rows(at.stdout)["bee"] == ("hand back", "hand back")
    assert rows(at.stdout)["review"] == ("stop", "stop")


def test_a_platform_drain_of_1000_moves_the_cap_to_975() -> None:
    done = hive("--runner-drain", "1800", "--platform-drain", "1000")
    assert done.returncode == 0
    assert done.stdout.splitlines()[0] == (
        "cap       975 s (the platform's drain 1000 s minus 20 s to hand back and 5 s to exit)"
    )


def test_a_platform_drain_too_short_for_the_hand_back_gives_a_cap_of_zero() -> None:
    done = hive("--runner-drain", "1800", "--platform-drain", "25")
    assert done.stdout.splitlines()[0].startswith("cap       0 s (the platform's drain 25 s")
    assert rows(done.stdout)["bee"] == ("hand back", "hand back")


def test_an_unknown_platform_drain_leaves_the_runners_drain() -> None:
    done = hive("--runner-drain", "600", "--platform-drain", "0")
    assert done.stdout.splitlines()[0] == (
        "cap       600 s (the runner's drain; the platform's drain is unknown)"
    )


def test_json_prints_one_object_for_scripts() -> None:
    done = hive("--runner-drain", "1800", "--platform-drain", "1000", "--waited", "10", "--json")
    assert done.returncode == 0
    assert len(done.stdout.strip().splitlines()) == 1
    assert json.loads(done.stdout) == {
        "runner_drain_seconds": 1800,
        "platform_drain_seconds": 1000,
        "waited_seconds": 10,
        "cap_seconds": 975,
        "kinds": {
            "bee": {"now": "hold", "at_cap": "hand back"},
            "review": {"now": "stop", "at_cap": "stop"},
            "round": {"now": "leave", "at_cap": "leave"},
            "job": {"now": "leave", "at_cap": "leave"},
            "wait": {"now": "leave", "at_cap": "leave"},
        },
    }


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--runner-drain", "-1", "--platform-drain", "0"], "'-1' is negative"),
        (["--runner-drain", "1.5", "--platform-drain", "0"], "'1.5' is not a whole number"),
        (["--runner-drain", "60", "--platform-drain", "x"], "'x' is not a whole number"),
        (["--runner-drain", "60", "--platform-drain", "0", "--waited", "-5"], "'-5' is negative"),
        (["--platform-drain", "0"], "the following arguments are required: --runner-drain"),
    ],
)
def test_bad_seconds_are_an_argparse_error_with_exit_2(args: list[str], message: str) -> None:
    done = hive(*args)
    assert done.returncode == 2
    assert done.stdout == ""
    assert message in done.stderr
