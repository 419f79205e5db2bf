"""Keys (RULES 7): credential slots, lanes, choosing a key, and sorting a provider's refusal.

Rows carry only a key's index and its fingerprint, never the key. A runner resolves the
index against its own variables; a duplicate value is one account, so it gets one slot.
"""

from __future__ import annotations

import hashlib
import itertools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import IntEnum

from hive.rules.states import ENDED_BADLY, QUOTA_EXHAUSTED, Outcome

KEY_VARIABLE = "HIVE_WORKER_KEY"
# HIVE_WORKER_KEY is index 0; HIVE_WORKER_KEY_<n> (n >= 2, no leading zero) is index n - 1.
_KEY_NAME = re.compile(r"HIVE_WORKER_KEY(?:_([1-9][0-9]*))?")

LANES_PER_KEY_DEFAULT = 1
LANES_PER_KEY_MAX = 4
FINGERPRINT_HEX_DIGITS = 16


def key_fingerprint(value: str) -> str:
    """The first 16 hex digits of SHA-256 over the key: it names the account, never the key."""
    return hashlib.sha256(value.encode("utf-8")).hexdigest()[:FINGERPRINT_HEX_DIGITS]


def key_variable(index: int) -> str:
    """The variable that holds key `index`: HIVE_WORKER_KEY, HIVE_WORKER_KEY_2, ..."""
    return KEY_VARIABLE if index == 0 else f"{KEY_VARIABLE}_{index + 1}"


def key_index(name: str) -> int | None:
    """The index a variable name holds, or None when it is not a key variable."""
    match = _KEY_NAME.fullmatch(name)
    if match is None:
        return None
    suffix = match.group(1)
    if suffix is None:
        return 0
    if suffix == "1":
        return None  # the first key has no suffix
    return int(suffix) - 1


@dataclass(frozen=True)
class KeySlot:
    """One key: its index, the variable it came from, its fingerprint, and (unprinted) value."""

    index: int
    variable: str
    fingerprint: str
    value: str = field(repr=False)


def key_slots(environ: Mapping[str, str]) -> tuple[KeySlot, ...]:
    """The keys in index order: trimmed, empty ones skipped, a duplicate value kept only at
    its first index (one account, one slot)."""
    found: list[tuple[int, str, str]] = []
    for name, raw in environ.items():
        index = key_index(name)
        value = raw.strip()
        if index is not None and value:
            found.append((index, name, value))
    found.sort()
    seen: set[str] = set()
    slots: list[KeySlot] = []
    for index, name, value in found:
        if value not in seen:
            seen.add(value)
            slots.append(KeySlot(index, name, key_fingerprint(value), value))
    return tuple(slots)


def lane_count(keys: int, lanes_per_key: int) -> int:
    """How many bees the keys carry at once."""
    return keys * lanes_per_key


def choose_key(
    indexes: Sequence[int], busy: Mapping[int, int], lanes_per_key: int, last_index: int | None
) -> int | None:
    """The least-busy key with a free lane, ties going to the first one met scanning
    circularly from just after `last_index`; None when every lane is busy."""
    scan = sorted(indexes)
    if last_index is not None:
        scan = [k for k in scan if k > last_index] + [k for k in scan if k <= last_index]
    free = [k for k in scan if busy.get(k, 0) < lanes_per_key]
    if not free:
        return None
    return min(free, key=lambda k: busy.get(k, 0))


def all_busy_sentence(indexes: Sequence[int], lanes_per_key: int) -> str:
    """The round's refusal when no key has a free lane: it names the next variable to add."""
    if not indexes:
        return f"no worker key is set: set {KEY_VARIABLE} to run a bee"
    taken = set(indexes)
    missing = next(i for i in itertools.count() if i not in taken)
    return (
        f"every key is busy ({len(taken)} keys x {lanes_per_key} lanes): "
        f"add {key_variable(missing)} to run more bees at once"
    )


class RefusalKind(IntEnum):
    """How a provider's refusal is sorted, from the kind the agent adapter reports."""

    QUOTA = 0  # the account is out: the turn ends, the key rests until its reset
    TRANSIENT = 1  # rate limit or overload: the key rests seconds, the next key is used
    OTHER = 2  # anything else: the turn ends badly, the key is not rested


REFUSAL_QUOTA = RefusalKind.QUOTA
REFUSAL_TRANSIENT = RefusalKind.TRANSIENT
REFUSAL_OTHER = RefusalKind.OTHER

REFUSALS: dict[str, RefusalKind] = {
    "quota": REFUSAL_QUOTA,
    "insufficient_quota": REFUSAL_QUOTA,
    "balance": REFUSAL_QUOTA,
    "billing": REFUSAL_QUOTA,
    "credit": REFUSAL_QUOTA,
    "402": REFUSAL_QUOTA,
    "billing_error": REFUSAL_QUOTA,  # Claude Code's word for a credit balance too low
    "rate_limit": REFUSAL_TRANSIENT,
    "rate-limit": REFUSAL_TRANSIENT,  # the agent protocol's own words (hive/agents/protocol.py)
    "overload": REFUSAL_TRANSIENT,
    "rate_limit_error": REFUSAL_TRANSIENT,
    "overloaded": REFUSAL_TRANSIENT,
    "overloaded_error": REFUSAL_TRANSIENT,
    "429": REFUSAL_TRANSIENT,
    "503": REFUSAL_TRANSIENT,
    "529": REFUSAL_TRANSIENT,
}


def sort_refusal(kind: str) -> RefusalKind:
    """A refusal's class from the kind the adapter saw (case and spaces ignored)."""
    return REFUSALS.get(kind.strip().lower(), REFUSAL_OTHER)


def refusal_outcome(refusal: int) -> Outcome | None:
    """The outcome a refusal ends the turn with, or None when the turn moves to another key."""
    if refusal == REFUSAL_QUOTA:
        return QUOTA_EXHAUSTED
    if refusal == REFUSAL_TRANSIENT:
        return None
    return ENDED_BADLY


KEY_REST_START_SECONDS = 5
KEY_REST_CAP_SECONDS = 300


def key_rest_seconds(strikes: int) -> int:
    """How long a key rests after its `strikes`-th transient refusal in a row: 5 s, doubling,
    capped at 300 s; 0 before any."""
    if strikes <= 0:
        return 0
    rest = KEY_REST_START_SECONDS
    for _ in range(strikes - 1):
        rest *= 2
        if rest >= KEY_REST_CAP_SECONDS:
            return KEY_REST_CAP_SECONDS
    return rest
