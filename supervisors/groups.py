"""Process groups: the one way this library signals, watches and stops them.

A process started with ``start_new_session=True`` leads its own group. So one
``killpg`` reaches it, its children and theirs. Killing one pid would leave the
children running. ``signal_group`` refuses the caller's own group, and groups 0 and 1,
rather than trusting its caller.

Whether a group still has members is read from /proc, skipping zombies. An orphan that
died is reparented to PID 1, which in a container often never reaps it. A zombie holds
no memory, no files and no slot.

``stop_group`` is the stop. It sends SIGTERM to the group and waits a grace. Then it
sends SIGKILL to the whole group and waits, bounded, for it to land. A grace of 0 is a
brutal kill, with no SIGTERM.
"""

from __future__ import annotations

import enum
import os
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path

from supervisors.procstat import stat_fields

# How often a waiter looks at /proc while it waits for a group to empty.
GROUP_POLL_SECONDS = 0.02

_PROC = Path("/proc")
# include/linux/sched.h: the task is exiting (set at the start of do_exit)
_PF_EXITING = 0x00000004
_SIGKILL_BIT = 1 << (signal.SIGKILL - 1)


class OwnGroupError(RuntimeError):
    """A group signal was aimed at the caller's own process group (or at no group)."""


class GroupStop(enum.Enum):
    """How ``stop_group`` ended."""

    ENDED = "ended"  # ended within the grace (or was already gone)
    KILLED = "killed"  # ended after SIGKILL to the group
    OUTLIVED = "outlived"  # still running when the kill should have landed


def signal_group(pgid: int, sig: int) -> bool:
    """Send ``sig`` to every process in group ``pgid``. False when the group is gone.
    Raises ``OwnGroupError`` for the caller's own group, 0 or 1."""
    if pgid <= 1 or pgid == os.getpgrp():
        raise OwnGroupError(f"refusing to signal process group {pgid}: it is not a child's")
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        return False
    return True


def process_alive(pid: int) -> bool:
    """True while ``pid`` is a process that is not a zombie."""
    if not _PROC.is_dir():
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    fields = stat_fields(_PROC / str(pid))
    return fields is not None and fields[0] not in ("Z", "X")


def process_exiting(pid: int) -> bool:
    """True once ``pid`` is on its way out. It is then gone, a zombie, or killed and still
    exiting. Still exiting means a thread with PF_EXITING in its /proc stat flags, or
    with SIGKILL pending. A process killed by SIGKILL is "alive" by its state until its
    leader thread is a zombie. Its other threads may already be gone, among them the one
    that started its groups."""
    if not _PROC.is_dir():
        return not process_alive(pid)
    task_dir = _PROC / str(pid) / "task"
    try:
        threads = list(task_dir.iterdir())
    except OSError:
        return True  # gone
    for thread in threads:
        fields = stat_fields(thread)
        if fields is None:
            continue  # that thread just ended
        # a zombie keeps the flag: PF_EXITING is never cleared
        if int(fields[6]) & _PF_EXITING or _sigkill_pending(thread):
            return True
    return not threads


def _sigkill_pending(thread_dir: Path) -> bool:
    """SIGKILL is pending for the thread (its own or its process's shared signals)."""
    try:
        status = (thread_dir / "status").read_text()
    except OSError:
        return False
    for line in status.splitlines():
        name, _, mask = line.partition(":")
        if name in ("SigPnd", "ShdPnd") and int(mask.strip(), 16) & _SIGKILL_BIT:
            return True
    return False


def group_members(pgid: int) -> list[int]:
    """The live (non-zombie) processes of group ``pgid``. A group with no process at all
    (signal 0 finds none) is answered without reading /proc. A walk of /proc reads every
    process's stat on the machine, thousands on a busy host, at each look."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return []
    except PermissionError:
        pass  # someone else's group by now: /proc says which are live
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
        fields = stat_fields(entry)
        if fields and fields[0] not in ("Z", "X") and fields[2] == str(pgid):
            members.append(int(entry.name))
    return members


def group_empty(pgid: int, timeout: float) -> bool:
    """Wait up to ``timeout`` seconds for group ``pgid`` to have no live member."""
    deadline = time.monotonic() + timeout
    pause = threading.Event()  # never set: a bounded pause between looks
    while group_members(pgid):
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        pause.wait(min(GROUP_POLL_SECONDS, left))
    return True


def stop_group(
    pgid: int,
    *,
    grace_seconds: float,
    kill_lands_seconds: float,
    ended: Callable[[float], bool] | None = None,
    send: Callable[[int], object] | None = None,
    before_kill: Callable[[], None] | None = None,
) -> GroupStop:
    """Stop group ``pgid``: SIGTERM, wait up to ``grace_seconds``, then SIGKILL to the
    whole group and wait up to ``kill_lands_seconds``. Returns within the sum of both.

    ``ended(timeout)`` says whether the work has ended, waiting up to ``timeout``; an
    ``Event.wait`` fits. By default the group has ended once it has no live member.
    ``send(sig)`` signals the group; the default is ``signal_group``. An owner that knows
    when the group number stops being its own guards it in ``send``. ``before_kill`` runs
    just before the SIGKILL, for a note in a transcript, say. Raises ``OwnGroupError``
    for the caller's own group."""
    done = ended if ended is not None else (lambda timeout: group_empty(pgid, timeout))
    signal_it = send if send is not None else (lambda sig: signal_group(pgid, sig))
    if grace_seconds > 0:
        signal_it(signal.SIGTERM)
        if done(grace_seconds):
            return GroupStop.ENDED
    elif done(0):
        return GroupStop.ENDED
    if before_kill is not None:
        before_kill()
    signal_it(signal.SIGKILL)
    return GroupStop.KILLED if done(kill_lands_seconds) else GroupStop.OUTLIVED
