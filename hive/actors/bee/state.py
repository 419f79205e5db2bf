"""Where a bee is in its life (`BeeState`), the moves it may make, and what a bee says of
itself (`BeeStatus`). Only `Bee._to` moves a bee, along `NEXT`."""

from __future__ import annotations

import enum
from dataclasses import dataclass


class BeeState(enum.Enum):
    """Where a bee is in its life. It only moves along `NEXT`, in `Bee._to`."""

    STARTING = "starting"  # cutting the worktree, starting the turn, writing the ledger
    RUNNING = "running"  # the ledger landed: the turn runs, the claim is renewed
    HANDING_BACK = "handing back"  # asked back (the drain's cap, a stop): the turn is stopped
    LOST = "lost"  # its row was reaped or re-dispatched: the turn is stopped, nothing written
    ENDING = "ending"  # the turn exited: salvage, bundle, the fenced end
    ENDED = "ended"  # its order ended (`outcome`), or it never started (`landed` False)


NEXT = {
    BeeState.STARTING: {BeeState.RUNNING, BeeState.HANDING_BACK, BeeState.ENDED},
    BeeState.RUNNING: {BeeState.HANDING_BACK, BeeState.LOST, BeeState.ENDING},
    BeeState.HANDING_BACK: {BeeState.LOST, BeeState.ENDING, BeeState.ENDED},
    BeeState.LOST: {BeeState.ENDING},
    BeeState.ENDING: {BeeState.ENDED},
    BeeState.ENDED: set(),
}


# the states in which a runner's bee renews its claim (held by the drain, or asked back
# and not yet ended: its row stays its own until the end writes it)
RENEWS = (BeeState.RUNNING, BeeState.HANDING_BACK)


@dataclass(frozen=True)
class BeeStatus:
    issue: int
    runner: str | None  # None: the Queen's own bee
    state: BeeState
    turn_started: bool
    outcome: str | None  # the order's outcome once this bee ended it
