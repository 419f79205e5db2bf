"""What an agent may tell the hive on its standard output, one line each.

    HIVE-REFUSAL: <kind>
        The provider refused the turn. <kind> is one of `quota` (quota or balance
        exhausted), `rate-limit` or `overload`. The last such line wins; the turn's
        ending reports it and `hive/rules/keys.py` decides what it means for the key.
    HIVE-USAGE: provider=<name> model=<name> input=<tokens> output=<tokens>
        Provider usage; every field is optional. Token counts add up over the turn's
        lines (an agent may report per request); provider and model keep the last value.

A line must start with the marker (no leading space). It still goes to the transcript
like any other line. A marked line that does not parse is not an error of the turn:
the adapter notes it in the transcript and carries on.
"""

from __future__ import annotations

from dataclasses import dataclass

REFUSAL_MARK = "HIVE-REFUSAL:"
USAGE_MARK = "HIVE-USAGE:"
REFUSAL_KINDS = ("quota", "rate-limit", "overload")
_USAGE_FIELDS = ("provider", "model", "input", "output")


class ProtocolError(ValueError):
    """A marked line that does not parse; `str()` says what was expected."""


@dataclass(frozen=True)
class Usage:
    """Provider usage reported by an agent; any field may be unknown."""

    provider: str | None = None
    model: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0

    def plus(self, later: Usage) -> Usage:
        """This usage followed by `later`: tokens add up, names keep the latest."""
        return Usage(
            provider=later.provider or self.provider,
            model=later.model or self.model,
            input_tokens=self.input_tokens + later.input_tokens,
            output_tokens=self.output_tokens + later.output_tokens,
        )


def parse_refusal(line: str) -> str | None:
    """The refusal kind on a `HIVE-REFUSAL:` line, None for any other line."""
    if not line.startswith(REFUSAL_MARK):
        return None
    kind = line[len(REFUSAL_MARK) :].strip().lower()
    if kind not in REFUSAL_KINDS:
        raise ProtocolError(
            f"{REFUSAL_MARK} {kind!r} is not a refusal kind: expected one of "
            + ", ".join(REFUSAL_KINDS)
        )
    return kind


def parse_usage(line: str) -> Usage | None:
    """The usage on a `HIVE-USAGE:` line, None for any other line."""
    if not line.startswith(USAGE_MARK):
        return None
    values: dict[str, str] = {}
    for word in line[len(USAGE_MARK) :].split():
        name, sep, value = word.partition("=")
        if not sep or name not in _USAGE_FIELDS or not value or name in values:
            raise ProtocolError(
                f"{USAGE_MARK} {word!r} is not a usage field: expected "
                "provider=<name> model=<name> input=<tokens> output=<tokens>"
            )
        values[name] = value
    tokens = {}
    for name in ("input", "output"):
        raw = values.get(name, "0")
        if not raw.isdigit():
            raise ProtocolError(f"{USAGE_MARK} {name}={raw!r} is not a token count")
        tokens[name] = int(raw)
    return Usage(values.get("provider"), values.get("model"), tokens["input"], tokens["output"])
