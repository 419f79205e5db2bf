"""The price table: US dollars per million tokens, by provider and model, read from a
TOML file (`config/prices.toml`; the package ships the same file, so an installed hive
prices turns too). `HIVE_PRICES_FILE` names another.

    [anthropic]
    "claude-sonnet-4-5" = { input = 3.00, output = 15.00 }
    [demo]
    "*" = { input = 0, output = 0 }

A file that does not read as such a table is refused with one line naming the file, the
entry and what is allowed.
"""

from __future__ import annotations

import math
import tomllib
from importlib import resources
from pathlib import Path
from typing import Any

from hive.errors import UsageError
from hive.rules.spend import Price, PriceTable

PACKAGED = "prices.toml"
_FIELDS = ("input", "output")


class PricesError(UsageError):
    """The price table does not read; `str()` is one line that says where and why."""


def packaged_text() -> str:
    """The price table the package ships."""
    return resources.files("hive").joinpath(PACKAGED).read_text(encoding="utf-8")


def load(path: Path | None = None) -> PriceTable:
    """The table in `path` (None: the packaged one); PricesError when it does not read."""
    where = str(path) if path is not None else f"the packaged {PACKAGED}"
    try:
        text = packaged_text() if path is None else path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise PricesError(f"{where}: cannot be read ({err.__class__.__name__})") from None
    return parse(text, where)


def parse(text: str, where: str = "the price table") -> PriceTable:
    """The table written in `text`; PricesError naming `where` when it is not one."""
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise PricesError(f"{where}: not TOML ({err})") from None
    table: dict[str, dict[str, Price]] = {}
    for provider, models in raw.items():
        if not isinstance(models, dict):
            raise PricesError(f"{where}: [{provider}] must be a table of models")
        table[provider] = {
            model: _price(entry, f"{where}: {provider}.{model}") for model, entry in models.items()
        }
    return table


def _price(entry: Any, where: str) -> Price:
    if not isinstance(entry, dict) or sorted(entry) != sorted(_FIELDS):
        raise PricesError(f"{where} must be {{ input = <USD>, output = <USD> }}")
    values = []
    for name in _FIELDS:
        value = entry[name]
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        if not ok or not math.isfinite(value) or value < 0:
            raise PricesError(f"{where}: {name} = {value!r} is not a price (a number >= 0)")
        values.append(float(value))
    return Price(values[0], values[1])
