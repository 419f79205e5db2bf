"""What /proc says about processes on this machine, for the benchmarks: the CPU time of a
server and every child it has or had (a PostgreSQL postmaster and its backends), and a
process's resident (RSS) and proportional (PSS) memory."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from supervisors.procstat import stat_fields

PROC = Path("/proc")
TICKS_PER_SECOND = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class Memory:
    rss_bytes: int
    pss_bytes: int


def tree_cpu_seconds(root: int) -> float:
    """CPU seconds (user + system) of `root`, of its live children, and of the children
    it has already reaped (a closed backend's time stays counted in its parent's)."""
    fields = stat_fields(PROC / str(root))
    if fields is None:
        return 0.0
    # fields from state on: utime is 14th of the whole line, so index 11 here
    ticks = sum(int(fields[i]) for i in (11, 12, 13, 14))
    for entry in PROC.iterdir():
        if not entry.name.isdigit():
            continue
        child = stat_fields(entry)
        if child is not None and int(child[1]) == root:
            ticks += int(child[11]) + int(child[12]) + int(child[13]) + int(child[14])
    return ticks / TICKS_PER_SECOND


def own_cpu_seconds(pid: int) -> float:
    """CPU seconds (user + system) of `pid` itself, its threads included and its children
    not (0 when it is gone)."""
    fields = stat_fields(PROC / str(pid))
    if fields is None:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / TICKS_PER_SECOND


def memory(pid: int) -> Memory | None:
    """RSS and PSS of `pid` from smaps_rollup; None when it is gone or unreadable."""
    try:
        text = (PROC / str(pid) / "smaps_rollup").read_text()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None
    found: dict[str, int] = {}
    for line in text.splitlines():
        key, _, rest = line.partition(":")
        if key in ("Rss", "Pss"):
            found[key] = int(rest.split()[0]) * 1024
    if "Rss" not in found or "Pss" not in found:
        return None
    return Memory(found["Rss"], found["Pss"])
