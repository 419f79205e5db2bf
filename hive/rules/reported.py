"""What an agent reports about itself is data, and bounded (issue 25).

An agent's token counts and costs arrive as text (`HIVE-USAGE:` lines) or as JSON (the
CLIs' streams). A figure no turn can have (twenty digits, a negative or NaN cost, a
superscript digit) is not a figure: the reader notes it in the transcript and ignores
it, so nothing absurd reaches the ending (a bigint column holds at most 2**63 - 1).
"""

from __future__ import annotations

import math
import re

from hive.rules.text import first_control

# one report's tokens: far above any model's context times its requests in a turn
TOKENS_MAX = 10**12
# a turn's tokens once its reports add up: still well inside a bigint
TURN_TOKENS_MAX = 10**15
# one report's cost, and a turn's once its reports add up, in US dollars
COST_USD_MAX = 100_000.0
TURN_COST_USD_MAX = 10_000_000.0
# a provider's or a model's name: a name, not a payload
NAME_MAX_CHARS = 200
# digits as an agent writes them: ASCII only
_DIGITS = re.compile(r"[0-9]{1,13}")
_DECIMAL = re.compile(r"[0-9]{1,9}(?:\.[0-9]{1,12})?")


def token_count(value: object) -> int | None:
    """`value` (a JSON number) as a token count within 0..TOKENS_MAX; None when it is no
    such count (a bool, a float, a string, a negative or larger number)."""
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return value if 0 <= value <= TOKENS_MAX else None


def token_count_text(text: str) -> int | None:
    """`text` (ASCII digits) as a token count, as `token_count`; None for other text
    (str.isdigit() also takes '²' and '٣')."""
    return token_count(int(text)) if _DIGITS.fullmatch(text) else None


def cost_usd(value: object) -> float | None:
    """`value` (a JSON number) as a cost in US dollars within 0..COST_USD_MAX; None when
    it is no such cost (NaN, infinite, negative, larger, a bool, a string)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) and 0.0 <= number <= COST_USD_MAX else None


def cost_usd_text(text: str) -> float | None:
    """`text` (a plain decimal such as `0.0123`) as a cost, as `cost_usd`; None for other
    text (an exponent, a sign, `nan`)."""
    return cost_usd(float(text)) if _DECIMAL.fullmatch(text) else None


def reported_name(value: object) -> str | None:
    """`value` as a provider's or a model's name: a string of 1..NAME_MAX_CHARS characters
    with no control character (NUL is refused by the store); None otherwise."""
    if not isinstance(value, str) or not 0 < len(value) <= NAME_MAX_CHARS:
        return None
    return None if first_control(value) is not None else value


def added_tokens(first: int, second: int) -> int:
    """Two token counts of one turn added, at most TURN_TOKENS_MAX."""
    return min(first + second, TURN_TOKENS_MAX)


def added_cost(first: float, second: float) -> float:
    """Two costs of one turn added, at most TURN_COST_USD_MAX."""
    return min(first + second, TURN_COST_USD_MAX)
