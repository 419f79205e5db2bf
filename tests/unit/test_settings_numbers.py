"""Every number a setting takes, against NaN, infinities, negatives, overflow and digits no
person means; read from a real environment by a real `hive` process too (issue 14)."""

import math
import os
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hive.rules.states import is_outcome, reaped_no_completion
from hive.settings import PREFIX, Settings, SettingsError
from hive.settings.variables import SPECS
from hive.store.reaping import stalled_outcome

# every setting whose value is a number, by the kind of number
WHOLE = sorted(n for n, (_, p) in SPECS.items() if p.__qualname__.startswith("integer."))
DECIMAL = sorted(n for n, (_, p) in SPECS.items() if p.__qualname__.startswith("decimal."))
HOSTILE = [
    "nan",
    "NaN",
    "-nan",
    "inf",
    "-inf",
    "Infinity",
    "-1",
    "-0.5",
    "1e400",
    "1" + "0" * 400,
    "99999999999999999999999",
    "0x10",
    "1e3",
    "1_0",
    "１０",
    "١٠",
    "+5",
    "5 5",
    "5\x00",
    "",
    " ",
]


def test_the_numbers_are_found() -> None:
    assert "STALL_MINUTES" in WHOLE and "QUEEN_TICK_SECONDS" in DECIMAL
    assert len(WHOLE) + len(DECIMAL) >= 17


@pytest.mark.parametrize("name", WHOLE + DECIMAL)
def test_every_number_refuses_every_hostile_value_in_one_line(name: str) -> None:
    for value in HOSTILE:
        if name in DECIMAL and value in ("1e3",):
            continue  # not a decimal either, but tested below as such
        with pytest.raises(SettingsError) as caught:
            Settings.from_env({PREFIX + name: value})
        (line,) = caught.value.problems
        assert line.startswith(f"{PREFIX}{name}=") and "expected " in line, (value, line)
        assert "\n" not in line and "\x00" not in line


@pytest.mark.parametrize("name", DECIMAL)
def test_a_decimal_takes_no_exponent(name: str) -> None:
    with pytest.raises(SettingsError):
        Settings.from_env({PREFIX + name: "1e3"})


numberish = st.one_of(
    st.integers(-(10**30), 10**30).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.text(alphabet="0123456789.-+e_ nainfINF", max_size=25),
)


@settings(max_examples=150, deadline=None)
@given(name=st.sampled_from(WHOLE + DECIMAL), value=numberish)
def test_a_number_taken_is_finite_in_its_kind_and_the_same_when_read_again(name, value):
    try:
        got = Settings.from_env({PREFIX + name: value})
    except SettingsError as err:
        assert len(err.problems) == 1 and err.problems[0].startswith(PREFIX + name)
        return
    field = SPECS[name][0]
    number = getattr(got, field)
    assert math.isfinite(number) and number >= 0
    if name in WHOLE:
        assert type(number) is int
    assert getattr(Settings.from_env({PREFIX + name: str(number)}), field) == number


@settings(max_examples=60, deadline=None)
@given(value=numberish | st.sampled_from(["0.5", "1.5", "120.0", "2", "10080", "10081"]))
def test_every_stall_window_taken_gives_an_outcome_in_the_closed_set(value: str) -> None:
    try:
        minutes = Settings.from_env({"HIVE_STALL_MINUTES": value}).stall_minutes
    except SettingsError:
        return
    assert is_outcome(stalled_outcome(minutes)), minutes
    assert stalled_outcome(minutes) == reaped_no_completion(minutes)


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("HIVE_RUNNER_SILENT_MINUTES", "1e26"),
        ("HIVE_QUEEN_TICK_SECONDS", "nan"),
        ("HIVE_STALL_MINUTES", "0.5"),
        ("HIVE_HTTP_ADDR", "127.0.0.1:٨٠٨٠"),
        ("HIVE_DATABASE_URL", ""),
        ("HIVE_KEY_ENV", "LD_PRELOAD"),
    ],
)
def test_a_real_process_reads_a_bad_variable_from_its_environment_in_one_line(name, value):
    env = {k: v for k, v in os.environ.items() if not k.startswith(PREFIX)}
    env[name] = value
    done = subprocess.run(
        [sys.executable, "-m", "hive", "status"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and done.stderr.startswith(f"hive: {name}=")
    assert "Traceback" not in done.stderr and done.stdout == ""
