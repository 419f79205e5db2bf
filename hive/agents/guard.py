"""The container guard (DESIGN 6): a runner starts a bee only when the container has the
memory for it; otherwise the order stays queued for another runner.

Free memory is the cgroup v2 limit minus its use (`memory.max` - `memory.current` in
the cgroup directory, /sys/fs/cgroup inside a container). With no limit (`max`), or no
cgroup v2 files, it is the host's MemAvailable from /proc/meminfo. When neither can be
read (not Linux) it is unknown, and an unknown amount does not stop a bee: the guard
protects a container, it does not forbid running elsewhere.
"""

from __future__ import annotations

from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")
MEMINFO = Path("/proc/meminfo")
BYTES_PER_MB = 1024 * 1024
_BYTES_PER_KB = 1024


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None


def _cgroup_free_bytes(cgroup_root: Path) -> int | None:
    limit = _read(cgroup_root / "memory.max")
    used = _read(cgroup_root / "memory.current")
    # no limit reads "max"; that, like anything else not a number, means no cgroup answer
    if not (limit and used and limit.isdigit() and used.isdigit()):
        return None
    # use can pass the limit for a moment (reclaim lags); free is then nothing
    return max(0, int(limit) - int(used))


def _host_available_bytes(meminfo: Path) -> int | None:
    text = _read(meminfo)
    for line in (text or "").splitlines():
        name, _, rest = line.partition(":")
        words = rest.split()
        if name == "MemAvailable" and words and words[0].isdigit():
            return int(words[0]) * _BYTES_PER_KB  # /proc/meminfo says kB and means KiB
    return None


def free_memory_bytes(cgroup_root: Path = CGROUP_ROOT, meminfo: Path = MEMINFO) -> int | None:
    """The container's free memory in bytes (see the module docstring); None if unknown."""
    free = _cgroup_free_bytes(cgroup_root)
    return free if free is not None else _host_available_bytes(meminfo)


def bees_that_fit(free_bytes: int | None, bee_memory_mb: int, wanted: int) -> int:
    """How many of `wanted` bees, each needing `bee_memory_mb`, fit in `free_bytes` (all
    of them when the free memory is unknown or a bee needs none)."""
    if free_bytes is None or bee_memory_mb <= 0:
        return max(0, wanted)
    return max(0, min(wanted, free_bytes // (bee_memory_mb * BYTES_PER_MB)))
