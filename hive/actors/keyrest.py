"""Keys that rest after a provider refused a turn on them (RULES 7), as a round reads them.

The ending that met the refusal wrote the rest to the store, in its own transaction
(`hive.store.keyrests`; the rule is `hive.rules.rests.rest_after`): a transient refusal
rests the key 5 s, doubling with each refusal in a row, at most 300 s; a quota refusal
until the reset time the agent reported, else HIVE_QUOTA_REST_SECONDS. Any other ending
of a turn on the key ends its rest. So a restarted Queen, or a standby one taking over,
skips the same keys, and an ending that lands after a newer one (its `finished_at` is
older: its transaction began first) still rests its key; the Queen once counted endings
herself past a `finished_at` watermark, and such an ending fell behind it unseen.

A resting key is skipped by the key choice, so the next free key is used. A rest written
for another key at the same index (its fingerprint differs) rests nothing here.
"""

from __future__ import annotations

from collections.abc import Iterable

from hive.rules.keys import KeySlot
from hive.store import keyrests
from hive.store.db import Db


def resting(db: Db, keys: Iterable[KeySlot]) -> dict[int, int]:
    """The keys of `keys` resting now, with the whole seconds left (at least 1)."""
    fingerprints = {k.index: k.fingerprint for k in keys}
    return {r.key_index: r.seconds_left for r in keyrests.resting(db, fingerprints)}
