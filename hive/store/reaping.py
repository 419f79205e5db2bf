"""The reapers' one statement (`reap_orders`, DESIGN 5, RULES 4).

Each reaper ends the unfinished orders its criteria find, with its outcome and code. It
answers what it ended and what the state table refused. The reapers themselves are
`hive.actors.reaper.reaper`. The order's row is `hive.store.orders`."""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass

from hive.rules.lifecycle import sources
from hive.rules.outcome_codes import OutcomeCode
from hive.rules.states import REAP_BOOT, REAP_STALL, Event, Outcome
from hive.store.db import Db, dicts, pick
from hive.store.orders import Order
from hive.store.transitions import Move, refused


def stalled_outcome(stall_minutes: float) -> str:
    """RULES 4's label for the two-hour rule, with its measured number of minutes."""
    return f"reaped: no completion within {stall_minutes:g} minutes"


@dataclass(frozen=True)
class Reaping:
    """What a reaper's statement did. `ended` holds the orders it ended. `refused` holds
    the moves it refused to rows its criteria found in a state its event may not leave.
    Each refusal is logged with both states, and the caller counts them. Only an
    unstarted, unfinished row (NONE) can be refused, since every other unfinished row is
    RUNNING."""

    ended: list[Order]
    refused: list[Move]


class Reaper(enum.StrEnum):
    """Which reaper's criteria `reap_orders` finds its rows by."""

    BOOT = "boot"
    SILENT = "silent"
    STALLED = "stalled"


def reap_at_boot(db: Db, *, spare: Iterable[int] = ()) -> Reaping:
    """End the Queen's own unfinished orders (queued_at NULL), except `spare`, by
    REAP_BOOT. Returns them so the caller can salvage."""
    return _reap(
        db, Reaper.BOOT, Outcome.REAPED_AT_BOOT, OutcomeCode.REAPED_AT_BOOT, REAP_BOOT, spare
    )


def reap_silent_runners(db: Db, silent_minutes: float, *, spare: Iterable[int] = ()) -> Reaping:
    """End runner orders whose heartbeat is older than `silent_minutes`, by REAP_STALL.
    They are never salvaged, since nothing of that bee is on this disk."""
    return _reap(
        db,
        Reaper.SILENT,
        Outcome.REAPED_RUNNER_SILENT,
        OutcomeCode.REAPED_RUNNER_SILENT,
        REAP_STALL,
        spare,
        silent_seconds=silent_minutes * 60.0,
    )


def reap_stalled_turns(db: Db, stall_minutes: float, *, spare: Iterable[int] = ()) -> Reaping:
    """End running orders whose turn began more than `stall_minutes` ago by dispatched_at,
    by REAP_STALL. A queued order nobody claimed is never reaped by this."""
    return _reap(
        db,
        Reaper.STALLED,
        stalled_outcome(stall_minutes),
        OutcomeCode.REAPED_NO_COMPLETION,
        REAP_STALL,
        spare,
        stall_seconds=stall_minutes * 60.0,
    )


def _reap(
    db: Db,
    reaper: Reaper,
    outcome: str,
    code: OutcomeCode,
    event: Event,
    spare: Iterable[int],
    *,
    silent_seconds: float | None = None,
    stall_seconds: float | None = None,
) -> Reaping:
    params = {
        "reaper": reaper.value,
        "outcome": str(outcome),
        "outcome_code": code.value,
        "spare": list(spare),
        "silent_seconds": silent_seconds,
        "stall_seconds": stall_seconds,
        "from_states": list(sources(event)),
    }
    rows = dicts(db, "reap_orders", params)
    return Reaping(
        ended=[pick(Order, r) for r in rows if r["refused_state"] is None],
        refused=[
            refused(r["issue"], event, r["refused_state"])
            for r in rows
            if r["refused_state"] is not None
        ],
    )
