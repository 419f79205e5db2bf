"""Releasing an order whose floor passed (RULES 4: FLOOR_PASSED moves EMPTY, SENDBACK
and WAIT to RELEASED), held to the state table at the writer."""

from __future__ import annotations

import uuid

from hive.rules.states import FLOOR_PASSED, SENDBACK
from hive.store.db import Db
from hive.store.transitions import Move, move


def release(
    db: Db,
    issue: int,
    conversation_id: uuid.UUID,
    *,
    state: int,
) -> Move:
    """Release this attempt, judged past its floor in `state`: it lands only while the
    row is still in that state (a verdict written since leaves it alone). A send-back
    keeps its note; any other state's is cleared."""
    params = {
        "issue": issue,
        "conversation_id": conversation_id,
        "judged_state": int(state),
        "note_kept_from": int(SENDBACK),
    }
    return move(
        db,
        "release_at_floor",
        params,
        issue=issue,
        conversation_id=conversation_id,
        event=FLOOR_PASSED,
    )
