"""Spend (lesson module 7): what a turn cost, and when a day's spend stops new orders.

A turn's cost in US dollars is the agent's own figure when it reports one (Claude Code's
`total_cost_usd`); else its tokens priced by the price table (`config/prices.toml`, US
dollars per million tokens, by provider and model); else unknown. A model is found by
its exact name, else by the longest name in the table it starts with (a dated release
such as `claude-sonnet-4-5-20250929` is priced as `claude-sonnet-4-5`), else by the
provider's `*` entry.

`HIVE_SPEND_CAP_USD` bounds a UTC day: once the day's spend (every turn spent since 00:00
UTC: a bee's when its attempt ended, a review's, a shaping turn's and a chat turn's when
it ran, each once) reaches it, a round writes no new order and says so in its report;
bees already running finish. A cap of 0 is no cap.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

TOKENS_PER_PRICE = 1_000_000  # the table's prices are per million tokens
NO_CAP_USD = 0.0
ANY_MODEL = "*"
DAY = timedelta(days=1)


class CostSource(enum.Enum):
    """Where an attempt's cost came from (the row's `cost_source`)."""

    AGENT = "agent"  # the agent's own figure
    PRICES = "prices"  # its tokens priced by the price table


@dataclass(frozen=True)
class Price:
    """US dollars per million input and output tokens."""

    input_usd: float
    output_usd: float


# provider -> model (or ANY_MODEL) -> price
PriceTable = Mapping[str, Mapping[str, Price]]


@dataclass(frozen=True)
class Cost:
    usd: float
    source: CostSource


def price_of(table: PriceTable, provider: str | None, model: str | None) -> Price | None:
    """The price of `model` of `provider`: its exact name, else the longest name in the
    table that it starts with, else the provider's `*` entry; None when unknown."""
    models = table.get(provider or "")
    if models is None:
        return None
    name = model or ""
    if name in models:
        return models[name]
    prefixes = [m for m in models if m != ANY_MODEL and m and name.startswith(m)]
    if prefixes:
        return models[max(prefixes, key=len)]
    return models.get(ANY_MODEL)


def cost_of(
    reported_usd: float | None, input_tokens: int, output_tokens: int, price: Price | None
) -> Cost | None:
    """A turn's cost: the agent's own figure when it gave one, else its tokens at `price`,
    else None (unknown)."""
    if reported_usd is not None:
        return Cost(max(0.0, reported_usd), CostSource.AGENT)
    if price is None:
        return None
    usd = (input_tokens * price.input_usd + output_tokens * price.output_usd) / TOKENS_PER_PRICE
    return Cost(usd, CostSource.PRICES)


def day_start(now: datetime) -> datetime:
    """00:00 UTC of the day `now` is in (the cap's day)."""
    utc = now.astimezone(UTC)
    return utc.replace(hour=0, minute=0, second=0, microsecond=0)


def next_day_start(now: datetime) -> datetime:
    """00:00 UTC of the day after `now`'s: when a capped day's stop lifts."""
    return day_start(now) + DAY


def spend_stops(spent_today_usd: float, cap_usd: float) -> bool:
    """True when new orders stop: a cap is set (above 0) and the day's spend reached it."""
    return cap_usd > NO_CAP_USD and spent_today_usd >= cap_usd


def capped_sentence(spent_today_usd: float, cap_usd: float) -> str:
    """The round's report line when the cap stops new orders."""
    return (
        f"today's spend ${spent_today_usd:.2f} reached HIVE_SPEND_CAP_USD=${cap_usd:.2f}:"
        " no new orders until 00:00 UTC; running bees finish"
    )
