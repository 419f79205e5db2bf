"""What an agent may tell the hive on its standard output, one line each.

    HIVE-REFUSAL: <kind> [resets=<time>]
        The provider refused the turn. <kind> is one word (letters, digits, `_`, `-`,
        `.`; at most 64 characters, case ignored): `quota` when the quota or balance is
        exhausted, `rate_limit` or `overloaded` for a transient refusal, or the
        provider's own word or status code (`insufficient_quota`, `429`, ...). The adapter
        only reports it: the last such line wins, the turn's ending carries it, and the
        table in `hive/rules/keys.py` (`sort_refusal`) decides what it means for the key.
        `resets=` is when the provider says the key works again: Unix seconds, or an
        ISO 8601 time with its zone (`2026-12-01T05:00:00Z`), within the calendar (up
        to the year 9999); a quota rests the key until then (hive/rules/rests.py).
    HIVE-USAGE: provider=<name> model=<name> input=<tokens> output=<tokens> cost_usd=<USD>
        Provider usage; every field is optional. Token counts and costs add up over the
        turn's lines (an agent may report per request); provider and model keep the last
        value. `cost_usd` is the agent's own figure (a decimal number of US dollars);
        without one the hive prices the tokens by its price table (hive/rules/spend.py).
        A count is ASCII digits up to 10**12, a cost at most 100,000 dollars
        (hive/rules/reported.py); a turn's sums stop at their bounds.

A line must start with the marker (no leading space). It still goes to the transcript
like any other line. A marked line that does not parse is not an error of the turn:
the adapter notes it in the transcript and carries on.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime

from hive.rules.reported import (
    added_cost,
    added_tokens,
    cost_usd_text,
    reported_name,
    token_count_text,
)

REFUSAL_MARK = "HIVE-REFUSAL:"
USAGE_MARK = "HIVE-USAGE:"
# the words an agent should prefer; any word of the form below is reported
REFUSAL_KINDS = ("quota", "rate_limit", "overloaded")
_KIND = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,63}$")
_USAGE_FIELDS = ("provider", "model", "input", "output", "cost_usd")
_UNIX_SECONDS = re.compile(r"^[0-9]{1,12}$")
RESETS_FIELD = "resets"


class ProtocolError(ValueError):
    """A marked line that does not parse; `str()` says what was expected."""


@dataclass(frozen=True)
class Usage:
    """Provider usage reported by an agent; any field may be unknown."""

    provider: str | None = None
    model: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None  # the agent's own figure, when it gives one

    def plus(self, later: Usage) -> Usage:
        """This usage followed by `later`: tokens and costs add up, names keep the latest."""
        cost = later.cost_usd if self.cost_usd is None else self.cost_usd
        if self.cost_usd is not None and later.cost_usd is not None:
            cost = added_cost(self.cost_usd, later.cost_usd)
        return Usage(
            provider=later.provider or self.provider,
            model=later.model or self.model,
            input_tokens=added_tokens(self.input_tokens, later.input_tokens),
            output_tokens=added_tokens(self.output_tokens, later.output_tokens),
            cost_usd=cost,
        )


def refusal_kind(word: str) -> str:
    """`word` as a refusal kind (trimmed, lower case); ProtocolError when it is not one."""
    kind = word.strip().lower()
    if not _KIND.match(kind):
        raise ProtocolError(
            f"{REFUSAL_MARK} {kind!r} is not a refusal kind: expected one word such as "
            + ", ".join(REFUSAL_KINDS)
            + f", then optionally {RESETS_FIELD}=<time>"
        )
    return kind


@dataclass(frozen=True)
class Refusal:
    """A refusal an agent reported: its kind, and when the provider says the key works
    again (None: not said)."""

    kind: str
    resets_at: datetime | None = None


def parse_refusal_line(line: str) -> Refusal | None:
    """The refusal on a `HIVE-REFUSAL:` line (its kind and reset time), None for any
    other line."""
    if not line.startswith(REFUSAL_MARK):
        return None
    text = line[len(REFUSAL_MARK) :]
    words = text.split()
    resets_at = None
    if len(words) == 2 and words[1].startswith(RESETS_FIELD + "="):
        resets_at = reset_time(words[1][len(RESETS_FIELD) + 1 :])
        text = words[0]
    return Refusal(refusal_kind(text), resets_at)


def reset_time(text: str) -> datetime:
    """`text` as a reset time: Unix seconds, or ISO 8601 with its zone; ProtocolError when
    it is neither."""
    try:
        if _UNIX_SECONDS.match(text):
            return datetime.fromtimestamp(int(text), UTC)
        when = datetime.fromisoformat(text)
        if when.tzinfo is not None:
            return when.astimezone(UTC)
    except (ValueError, OverflowError, OSError):  # past the calendar (the year 33658)
        pass
    raise ProtocolError(
        f"{REFUSAL_MARK} resets={text!r} is not a time: expected Unix seconds or ISO 8601"
        " with its zone (2026-12-01T05:00:00Z)"
    )


def parse_usage(line: str) -> Usage | None:
    """The usage on a `HIVE-USAGE:` line, None for any other line."""
    if not line.startswith(USAGE_MARK):
        return None
    values: dict[str, str] = {}
    for word in line[len(USAGE_MARK) :].split():
        name, sep, value = word.partition("=")
        if not sep or name not in _USAGE_FIELDS or not value or name in values:
            raise ProtocolError(
                f"{USAGE_MARK} {word!r} is not a usage field: expected provider=<name>"
                " model=<name> input=<tokens> output=<tokens> cost_usd=<USD>"
            )
        values[name] = value
    tokens = {}
    for name in ("input", "output"):
        raw = values.get(name, "0")
        count = token_count_text(raw)
        if count is None:
            raise ProtocolError(
                f"{USAGE_MARK} {name}={raw!r} is not a token count: expected ASCII digits,"
                " at most 10**12"
            )
        tokens[name] = count
    cost = None
    if "cost_usd" in values:
        raw = values["cost_usd"]
        cost = cost_usd_text(raw)
        if cost is None:
            raise ProtocolError(
                f"{USAGE_MARK} cost_usd={raw!r} is not a cost: expected US dollars such as 0.0123,"
                " at most 100000"
            )
    names: dict[str, str | None] = {}
    for name in ("provider", "model"):
        given = values.get(name)
        names[name] = None if given is None else reported_name(given)
        if given is not None and names[name] is None:
            raise ProtocolError(
                f"{USAGE_MARK} {name}={given[:40]!r} is not a name: expected at most 200"
                " characters, no control character"
            )
    return Usage(names["provider"], names["model"], tokens["input"], tokens["output"], cost)
