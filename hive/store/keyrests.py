"""Keys resting after their provider refused a turn, in `queen_key_rest` (RULES 7).

The ending that meets a refusal rests its key here, in the ending's own transaction
(`endings.end`). So every Queen reads the same rests, a restarted one or a standby that
takes over. Endings on one key move its rest in the order they land. The rule is
`hive.rules.rests.rest_after`; this module only reads and writes its answer.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg

from hive.rules.keys import KeySlot
from hive.rules.rests import NO_REST, KeyEnding, Rest, moves_rest, rest_after, seconds_left
from hive.store.db import Db, dicts, one, one_dict


@dataclass(frozen=True)
class Resting:
    """A key resting now. It holds the key's index and fingerprint, the refusals in a
    row, the end of the rest, the outcome that rested it and the whole seconds left."""

    key_index: int
    key_fingerprint: str | None
    strikes: int
    until: datetime
    reason: str | None
    seconds_left: int


def after_ending(
    conn: psycopg.Connection[Any], issue: int, conversation_id: uuid.UUID, ending: KeyEnding
) -> Rest | None:
    """Move the rest of the key of an attempt that just ended in a refusal, as `ending`
    says. The attempt is (`issue`, `conversation_id`). Call it inside the ending's
    transaction. Returns the key's rest now, or None when the attempt has no key.

    It runs two statements. The first makes the rest's row if need be and locks it, with
    the order's fingerprint. The second writes the rest the rule decided. An ending that
    is no refusal ends its key's rest in its own statement (`end_order`) instead. Raises
    ValueError for an ending that is no refusal."""
    if not moves_rest(ending.code):
        raise ValueError(f"{ending.code.value!r} rests no key")
    params = {"issue": issue, "conversation_id": conversation_id}
    row = one_dict(conn, "lock_key_rest", params)
    if row is None:
        return None  # the order has no key
    return _rest(conn, row, row["order_fingerprint"], ending)


def after_refusal(conn: psycopg.Connection[Any], key: KeySlot, ending: KeyEnding) -> Rest:
    """Move the rest of `key` after a turn that is no order's (a chat turn) met a refusal
    as `ending` says (call inside a transaction): the key's rest now. Raises ValueError
    for an ending that is no refusal."""
    if not moves_rest(ending.code):
        raise ValueError(f"{ending.code.value!r} rests no key")
    params = {"key_index": key.index, "key_fingerprint": key.fingerprint}
    row = one_dict(conn, "lock_rest_of_key", params)
    assert row is not None, "an upsert answers its row"
    return _rest(conn, row, key.fingerprint, ending)


def _rest(
    conn: psycopg.Connection[Any],
    row: Mapping[str, Any],
    fingerprint: str | None,
    ending: KeyEnding,
) -> Rest:
    """Write the rest the rule decides from the locked `row` for the key `fingerprint`
    names (a rest written for another key at its index starts afresh)."""
    same_key = row["key_fingerprint"] == fingerprint
    before = Rest(row["strikes"], row["rests_until"]) if same_key else NO_REST
    rest = rest_after(before, ending, row["at"])
    one(
        conn,
        "set_key_rest",
        {
            "key_index": row["key_index"],
            "key_fingerprint": fingerprint,
            "strikes": rest.strikes,
            "rests_until": rest.until,
            "reason": ending.reason,
        },
    )
    return rest


def resting(db: Db, fingerprints: Mapping[int, str] | None = None) -> list[Resting]:
    """The keys resting now, by index. `fingerprints` maps an index to the fingerprint of
    the key this process holds there. With it, a rest of another key at that index is
    left out."""
    found = []
    for row in dicts(db, "resting_keys"):
        index, fingerprint = row["key_index"], row["key_fingerprint"]
        if fingerprints is not None and fingerprints.get(index) != fingerprint:
            continue
        left = seconds_left(row["rests_until"], row["at"])
        if left > 0:
            found.append(
                Resting(index, fingerprint, row["strikes"], row["rests_until"], row["reason"], left)
            )
    return found


def resting_seconds(db: Db, keys: Iterable[KeySlot]) -> dict[int, int]:
    """The keys of `keys` resting now, each by its index and fingerprint, with the whole
    seconds left (at least 1). A Queen round skips them."""
    fingerprints = {k.index: k.fingerprint for k in keys}
    return {r.key_index: r.seconds_left for r in resting(db, fingerprints)}
