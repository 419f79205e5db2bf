"""The warden's own program (see ``supervisors.warden``), run as a file by a bare
interpreter (``python -I -S``): it imports nothing of this package.

It reads its owner's lines on standard input:

    + <pgid> <starttime>   a group started (its leader's start time, /proc stat field 22)
    - <pgid>               the group is gone
    d <directory>          keep a record file per held group in this directory

At the end of its input (its owner died, or closed the pipe) it SIGKILLs every group it
still holds whose leader is the one it was told of, removes the records, and exits.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from pathlib import Path

_PROC = Path("/proc")


def start_time(pid: int) -> str | None:
    """Field 22 of /proc/<pid>/stat (the start time in clock ticks); None when gone."""
    try:
        raw = (_PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    return raw[raw.rfind(")") + 2 :].split()[19]


def has_members(pgid: int) -> bool:
    """True while group ``pgid`` has a live (non-zombie) process."""
    for entry in _PROC.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            raw = (entry / "stat").read_text()
        except OSError:
            continue
        fields = raw[raw.rfind(")") + 2 :].split()
        if fields[0] not in ("Z", "X") and fields[2] == str(pgid):
            return True
    return False


def still_ours(pgid: int, started: str) -> bool:
    """Group ``pgid`` is the one recorded: its leader is the same process, or the leader
    is gone and the group still has members (a group's number is not handed out again
    while it has members)."""
    now = start_time(pgid)
    if now is not None:
        return now == started
    return has_members(pgid)


def kill(pgid: int, started: str) -> None:
    if pgid > 1 and still_ours(pgid, started):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)


def main() -> None:
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)  # it ends when its owner does, not before
    held: dict[int, str] = {}
    records: Path | None = None
    for line in sys.stdin:
        op, _, rest = line.strip().partition(" ")
        words = rest.split()
        if op == "+" and len(words) == 2:
            held[int(words[0])] = words[1]
            if records is not None:
                with contextlib.suppress(OSError):
                    (records / words[0]).write_text(words[1])
        elif op == "-" and len(words) == 1:
            held.pop(int(words[0]), None)
            if records is not None:
                with contextlib.suppress(OSError):
                    (records / words[0]).unlink()
        elif op == "d" and rest:
            records = Path(rest)
            for pgid, started in held.items():
                with contextlib.suppress(OSError):
                    (records / str(pgid)).write_text(started)
    for pgid, started in held.items():
        kill(pgid, started)
        if records is not None:
            with contextlib.suppress(OSError):
                (records / str(pgid)).unlink()


if __name__ == "__main__":
    main()
