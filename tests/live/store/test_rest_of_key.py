"""A key's rest after a turn that is no order's (a chat turn) met a refusal: by the key's
index and fingerprint (hive.store.keyrests.after_refusal), strikes adding up on the same
key, afresh for another key at that index."""

from __future__ import annotations

from typing import Any

import pytest

from hive.rules.keys import key_slots
from hive.rules.outcome_codes import OutcomeCode
from hive.rules.rests import KeyEnding
from hive.store import keyrests

pytestmark = pytest.mark.live

OLD, NEW = key_slots({"HIVE_WORKER_KEY": "old-key"})[0], key_slots({"HIVE_WORKER_KEY": "new"})[0]
REFUSED = KeyEnding(OutcomeCode.REFUSED, None, 3600)


def test_refusals_on_one_key_add_strikes_and_another_key_starts_afresh(conn: Any) -> None:
    with conn.transaction():
        assert keyrests.after_refusal(conn, OLD, REFUSED).strikes == 1
    with conn.transaction():
        assert keyrests.after_refusal(conn, OLD, REFUSED).strikes == 2  # 5 s, then 10 s
    [rests] = keyrests.resting(conn)
    assert (rests.key_index, rests.key_fingerprint, rests.strikes) == (0, OLD.fingerprint, 2)
    assert 5 < rests.seconds_left <= 10
    with conn.transaction():  # the key at index 0 was replaced since
        assert keyrests.after_refusal(conn, NEW, REFUSED).strikes == 1
    [rests] = keyrests.resting(conn)
    assert (rests.key_fingerprint, rests.strikes) == (NEW.fingerprint, 1)


def test_an_ending_that_is_no_refusal_rests_no_key(conn: Any) -> None:
    with pytest.raises(ValueError, match="rests no key"):
        keyrests.after_refusal(conn, OLD, KeyEnding(OutcomeCode.FINISHED, None, 3600))
