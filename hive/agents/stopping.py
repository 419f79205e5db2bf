"""Stopping a turn's process group (RULES 2): the only code that sends a signal to a
group. The card's constants live in hive/rules/turn_stop.py and are re-exported here.

A turn that is an OS process runs in its own process group (start_new_session=True), so
one `killpg` reaches the agent, its children and their children; killing one pid would
leave the children running. A group signal must never reach the hive's own group, so
`signal_group` refuses it rather than trusting its caller.

Whether a group still has members is read from /proc, skipping zombies: an orphan that
died is reparented to PID 1, which in a container often never reaps it, and a zombie
holds no memory, no files and no slot.
"""

from __future__ import annotations

import os
from pathlib import Path

from hive.rules.turn_stop import KILL_LANDS_MS, LANE_FREE_MS, TURN_STOP_GRACE_MS

# How often a watcher looks at /proc while it waits for a group to empty.
GROUP_POLL_SECONDS = 0.02

_PROC = Path("/proc")


class OwnGroupError(RuntimeError):
    """A group signal was aimed at the hive's own process group (or at no group)."""


def signal_group(pgid: int, sig: int) -> bool:
    """Send `sig` to every process in group `pgid`; False when the group is gone."""
    if pgid <= 1 or pgid == os.getpgrp():
        raise OwnGroupError(f"refusing to signal process group {pgid}: it is not a turn's")
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        return False
    return True


def _stat_fields(pid_dir: Path) -> list[str] | None:
    """The fields of /proc/<pid>/stat after the command name (state is [0], pgrp [2])."""
    try:
        raw = (pid_dir / "stat").read_text()
    except OSError:
        return None
    # the command name sits in parentheses and may itself contain spaces or ')'
    return raw[raw.rfind(")") + 2 :].split()


def process_alive(pid: int) -> bool:
    """True while `pid` is a process that is not a zombie."""
    if not _PROC.is_dir():
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    fields = _stat_fields(_PROC / str(pid))
    return fields is not None and fields[0] not in ("Z", "X")


def group_members(pgid: int) -> list[int]:
    """The live (non-zombie) processes of group `pgid`."""
    if not _PROC.is_dir():
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return []
        except PermissionError:
            pass
        return [pgid]
    members = []
    for entry in _PROC.iterdir():
        if not entry.name.isdigit():
            continue
        fields = _stat_fields(entry)
        if fields and fields[0] not in ("Z", "X") and fields[2] == str(pgid):
            members.append(int(entry.name))
    return members


__all__ = [
    "GROUP_POLL_SECONDS",
    "KILL_LANDS_MS",
    "LANE_FREE_MS",
    "TURN_STOP_GRACE_MS",
    "OwnGroupError",
    "group_members",
    "process_alive",
    "signal_group",
]
