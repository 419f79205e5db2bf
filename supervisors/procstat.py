"""What /proc/<pid>/stat says of a process, read in one place: its fields after the
command name, and its start time.

`warden_main` keeps its own copy: it runs on a bare interpreter and imports nothing of
this package.
"""

from __future__ import annotations

from pathlib import Path

PROC = Path("/proc")


def stat_fields(pid_dir: Path) -> list[str] | None:
    """The fields of `pid_dir`/stat after the command name (state is [0], ppid [1],
    pgrp [2], utime [11], start time [19]); None when it cannot be read (gone)."""
    try:
        raw = (pid_dir / "stat").read_text()
    except OSError:
        return None
    # the command name sits in parentheses and may itself contain spaces or ')'
    return raw[raw.rfind(")") + 2 :].split()


def start_time(pid: int) -> str | None:
    """The start time of `pid` (/proc stat field 22, clock ticks); None when gone."""
    fields = stat_fields(PROC / str(pid))
    return None if fields is None else fields[19]
