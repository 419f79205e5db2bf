"""Stopping a turn's process group (RULES 2), by the one group stop of
`supervisors.groups`: SIGTERM to the group, the grace (TURN_STOP_GRACE_MS), then SIGKILL
to the whole group and up to KILL_LANDS_MS for it to land, so the slot is free within
LANE_FREE_MS. The card's constants live in hive/rules/turn_stop.py and are re-exported.

Every signal the hive sends to a group goes through here: the command agent's stop, the
bee actor's kill (`SupervisedActor.on_kill`) and the cleanup of `hive.swarm`.

A turn never outlives its process (`supervisors.warden`): `hold_turn_groups(workdir)`,
called once at a process's start, kills the groups an earlier process on the same
workdir left behind and records this process's groups there for the next one.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from hive.rules.turn_stop import KILL_LANDS_MS, LANE_FREE_MS, TURN_STOP_GRACE_MS
from supervisors.groups import (
    GROUP_POLL_SECONDS,
    GroupStop,
    OwnGroupError,
    group_empty,
    group_members,
    process_alive,
    signal_group,
    stop_group,
)
from supervisors.warden import sweep, warden

# Under HIVE_WORKDIR: one directory per live process, one record per turn group.
TURN_GROUPS_DIRNAME = "turn-groups"

log = logging.getLogger("hive.agents")


def stop_turn_group(
    pgid: int,
    *,
    grace_ms: int = TURN_STOP_GRACE_MS,
    ended: Callable[[float], bool] | None = None,
    send: Callable[[int], object] | None = None,
    before_kill: Callable[[], None] | None = None,
) -> GroupStop:
    """Stop group `pgid` by the turn-stop rule; returns within `grace_ms` + KILL_LANDS_MS.
    `ended`, `send` and `before_kill` are `stop_group`'s. A grace of 0 is a brutal kill
    (RULES 1: `stop_signal(0, 0)` is X_KILL). Raises OwnGroupError for our own group."""
    return stop_group(
        pgid,
        grace_seconds=grace_ms / 1000,
        kill_lands_seconds=KILL_LANDS_MS / 1000,
        ended=ended,
        send=send,
        before_kill=before_kill,
    )


def kill_group(pgid: int) -> GroupStop:
    """SIGKILL to the whole group now, and up to KILL_LANDS_MS for it to empty."""
    return stop_turn_group(pgid, grace_ms=0)


def hold_turn_groups(workdir: Path) -> list[int]:
    """Kill the turn groups that an earlier process on `workdir` left (it died with its
    warden), then record this process's groups there; the groups killed."""
    root = Path(workdir) / TURN_GROUPS_DIRNAME
    killed = sweep(root)
    if killed:
        log.warning(
            "killed %d process groups an earlier process left running: %s",
            len(killed),
            ", ".join(map(str, killed)),
        )
    warden().keep_records(root)
    return killed


__all__ = [
    "GROUP_POLL_SECONDS",
    "KILL_LANDS_MS",
    "LANE_FREE_MS",
    "TURN_STOP_GRACE_MS",
    "GroupStop",
    "OwnGroupError",
    "group_empty",
    "group_members",
    "hold_turn_groups",
    "kill_group",
    "process_alive",
    "signal_group",
    "stop_turn_group",
]
