"""The warden's own program (see ``supervisors.warden``). A bare interpreter
(``python -I -S``) runs it as a file, so it imports nothing of this package.

It reads its owner's lines on standard input:

    + <pgid> <starttime>   a group started (its leader's start time, /proc stat field 22)
    - <pgid>               the group is gone
    d <directory>          keep a record file per held group (and one per scratch
                           directory, `scratch-<hash>` holding its path) in this directory
    f <pgid> <seconds>     the group's fence: SIGKILL it unless another `f` for it comes
                           within <seconds> (its owner could not renew the group's claim:
                           stopped, or cut off from the store)
    p <directory>          a scratch directory of the owner's: removed at its death
    u <directory>          the owner removed it itself: forget it

Its input ends when its owner died or closed the pipe. Then it SIGKILLs every group it
still holds whose leader is the one it was told of. It removes the records and the
scratch directories it holds, and exits.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import select
import shutil
import signal
import sys
import time
from pathlib import Path

_PROC = Path("/proc")
SCRATCH_PREFIX = "scratch-"  # supervisors.warden reads these records (the sweep)


def start_time(pid: int) -> str | None:
    """Field 22 of /proc/<pid>/stat, the start time in clock ticks. None when gone."""
    try:
        raw = (_PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    return raw[raw.rfind(")") + 2 :].split()[19]


def still_ours(pgid: int, started: str) -> bool:
    """Whether group ``pgid`` is the one recorded. It is when its leader is the same
    process, or the leader is gone. A group's number is not handed out again while the
    group has members. So whatever members it still has are the group's, and a group
    with none takes the kill as a no-op. Nothing walks /proc, so at its owner's death
    the warden kills at once. A walk per group took 0.1-0.4 s at a load of 17, and
    seconds at 40."""
    now = start_time(pgid)
    return now is None or now == started


def kill(pgid: int, started: str) -> None:
    if pgid > 1 and still_ours(pgid, started):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)


def main() -> None:
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)  # it ends when its owner does, not before
    held: dict[int, str] = {}
    fences: dict[int, float] = {}  # pgid -> the monotonic time its fence falls
    records: Path | None = None
    scratch: set[str] = set()
    fd = sys.stdin.fileno()
    pending = b""
    while True:
        wait = None if not fences else max(0.0, min(fences.values()) - time.monotonic())
        ready, _, _ = select.select([fd], [], [], wait)
        if ready:
            chunk = os.read(fd, 65536)
            if not chunk:
                break  # the owner died, or closed the pipe
            *lines, pending = (pending + chunk).split(b"\n")
            for line in lines:
                records = _obey(line.decode(), held, fences, records, scratch)
        now = time.monotonic()
        for pgid in [pgid for pgid, falls in fences.items() if falls <= now]:
            del fences[pgid]
            if pgid in held:
                kill(pgid, held[pgid])
    for pgid, started in held.items():
        kill(pgid, started)
        if records is not None:
            _unlink(records / str(pgid))
    for directory in scratch:  # after the kills: nothing of the groups writes there now
        shutil.rmtree(directory, ignore_errors=True)
        if records is not None:
            _unlink(records / _scratch_name(directory))


def _obey(
    line: str,
    held: dict[int, str],
    fences: dict[int, float],
    records: Path | None,
    scratch: set[str],
) -> Path | None:
    """Carry out one of the owner's lines. Returns the record directory after it."""
    op, _, rest = line.strip().partition(" ")
    words = rest.split()
    if op == "+" and len(words) == 2:
        held[int(words[0])] = words[1]
        if records is not None:
            _write_whole(records / words[0], words[1])
    elif op == "-" and len(words) == 1:
        held.pop(int(words[0]), None)
        fences.pop(int(words[0]), None)
        if records is not None:
            _unlink(records / words[0])
    elif op == "f" and len(words) == 2 and int(words[0]) in held:
        fences[int(words[0])] = time.monotonic() + float(words[1])
    elif op == "p" and rest:
        scratch.add(rest)
        if records is not None:
            _write_whole(records / _scratch_name(rest), rest)
    elif op == "u" and rest:
        scratch.discard(rest)
        if records is not None:
            _unlink(records / _scratch_name(rest))
    elif op == "d" and rest:
        records = Path(rest)
        for pgid, started in held.items():
            _write_whole(records / str(pgid), started)
        for directory in scratch:
            _write_whole(records / _scratch_name(directory), directory)
    return records


def _write_whole(path: Path, text: str) -> None:
    """Write a record whole or not at all, through a rename. So a warden killed mid-write
    leaves no empty record. A sweep could not tell an empty record from another
    process's group, and would leave that group running."""
    partial = path.with_name(f".{path.name}.partial")
    with contextlib.suppress(OSError):
        partial.write_text(text)
        os.replace(partial, path)


def _unlink(path: Path) -> None:
    with contextlib.suppress(OSError):
        path.unlink()


def _scratch_name(directory: str) -> str:
    return SCRATCH_PREFIX + hashlib.sha256(directory.encode()).hexdigest()[:24]


if __name__ == "__main__":
    main()
