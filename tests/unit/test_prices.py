"""The price table: the file in config/ and the one the package ships are the same, both
read, and a bad table is refused with one line naming the file, the entry and what is
allowed (at start, through HIVE_PRICES_FILE)."""

import tomllib
from pathlib import Path

import pytest

from hive import prices
from hive.rules.spend import Price, price_of
from hive.settings import Settings, SettingsError

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "config" / "prices.toml"


def test_the_packaged_table_is_config_prices_toml_and_ships_in_the_wheel() -> None:
    assert prices.packaged_text() == CONFIG.read_text()
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert "prices.toml" in data["package-data"]["hive"]


def test_the_packaged_table_prices_the_agents_the_hive_runs() -> None:
    table = prices.load()
    assert price_of(table, "anthropic", "claude-sonnet-4-5-20250929") == Price(3.0, 15.0)
    assert price_of(table, "openai", "gpt-5-codex") == Price(1.25, 10.0)
    assert price_of(table, "demo", "demo") == Price(0.0, 0.0)
    assert prices.load(CONFIG) == table


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("not [toml", "not TOML"),
        ("anthropic = 3", "[anthropic] must be a table of models"),
        ("[anthropic]\nx = 3", "anthropic.x must be { input = <USD>, output = <USD> }"),
        ("[anthropic]\nx = { input = 1 }", "anthropic.x must be { input = <USD>, output"),
        ("[a]\nx = { input = 1, output = 2, cache = 3 }", "a.x must be {"),
        ("[a]\nx = { input = -1, output = 2 }", "a.x: input = -1 is not a price (a number >= 0)"),
        ("[a]\nx = { input = 1, output = 'two' }", "a.x: output = 'two' is not a price"),
        ("[a]\nx = { input = true, output = 2 }", "a.x: input = True is not a price"),
        ("[a]\nx = { input = nan, output = 2 }", "a.x: input = nan is not a price"),
        ("[a]\nx = { input = inf, output = 2 }", "a.x: input = inf is not a price"),
    ],
)
def test_a_bad_table_is_refused_with_one_line_naming_where(text: str, says: str) -> None:
    with pytest.raises(prices.PricesError) as caught:
        prices.parse(text, "my.toml")
    assert str(caught.value).startswith("my.toml")
    assert says in str(caught.value) and "\n" not in str(caught.value)


def test_an_unreadable_file_is_one_line_too(tmp_path: Path) -> None:
    with pytest.raises(prices.PricesError, match=r"missing.toml: cannot be read"):
        prices.load(tmp_path / "missing.toml")


def test_hive_prices_file_is_read_at_start_with_every_other_bad_variable(tmp_path: Path) -> None:
    good = tmp_path / "prices.toml"
    good.write_text('[acme]\n"m" = { input = 1, output = 2 }\n')
    assert Settings.from_env({"HIVE_PRICES_FILE": str(good)}).prices_file == good
    assert Settings.from_env({"HIVE_PRICES_FILE": ""}).prices_file is None
    bad = tmp_path / "bad.toml"
    bad.write_text("[acme]\nm = 1\n")
    with pytest.raises(SettingsError) as caught:
        Settings.from_env({"HIVE_PRICES_FILE": str(bad), "HIVE_SPEND_CAP_USD": "-1"})
    problems = sorted(caught.value.problems)
    assert len(problems) == 2
    assert problems[0].startswith("HIVE_PRICES_FILE=") and "acme.m must be {" in problems[0]
    assert "\n" not in problems[0]
    assert problems[1] == (
        "HIVE_SPEND_CAP_USD='-1' is not allowed: expected a number from 0 to 1e+06"
        " (ASCII digits, '.' before a fraction)"
    )


@pytest.mark.parametrize(
    ("name", "raw", "value"),
    [
        ("HIVE_SPEND_CAP_USD", "0", 0.0),
        ("HIVE_SPEND_CAP_USD", "25.50", 25.5),
        ("HIVE_QUOTA_REST_SECONDS", "1", 1),
        ("HIVE_QUOTA_REST_SECONDS", "604800", 604800),
    ],
)
def test_the_spend_cap_and_the_quota_rest_take_their_range(name, raw, value) -> None:
    field = name.removeprefix("HIVE_").lower()
    assert getattr(Settings.from_env({name: raw}), field) == value


@pytest.mark.parametrize(
    ("name", "raw"),
    [
        ("HIVE_SPEND_CAP_USD", "1000001"),
        ("HIVE_SPEND_CAP_USD", "ten"),
        ("HIVE_SPEND_CAP_USD", "1e3"),
        ("HIVE_QUOTA_REST_SECONDS", "0"),
        ("HIVE_QUOTA_REST_SECONDS", "604801"),
    ],
)
def test_out_of_range_spend_settings_are_refused_naming_the_variable(name, raw) -> None:
    with pytest.raises(SettingsError, match=f"^{name}='{raw}' is not allowed: expected"):
        Settings.from_env({name: raw})
