"""The warden: a process's groups never outlive it.

A group started with ``start_new_session=True`` is out of reach of whatever kills its
starter. A process killed by SIGKILL or the OOM killer would leave its groups running.
Three things stop that.

- The **warden** is a small helper process (``warden_main.py``). It starts with the
  first group. It holds the read end of a pipe that only this process writes to. It is
  told of each group when it starts and when it is gone. When the pipe closes, its
  owner is dead, and it SIGKILLs every group it still holds at once. It also removes
  the scratch directories it was given (``remove_at_death``) and not told of again.
  It ignores SIGINT, SIGTERM and SIGHUP, so it ends only when its owner does.
- The **parent-death signal** (``PR_SET_PDEATHSIG``) sends SIGKILL to a group's leader
  when the thread that started it ends. One spawner thread starts every group and lives
  as long as the process (``supervisors.work``). So the signal comes at the process's
  death. It reaches the leader only; the warden reaches the rest.
- The **records** are kept with ``keep_records(root)``. The warden writes one file per
  held group under ``root/<pid>/``, a directory this process holds a lock on. A later
  process with the same root calls ``sweep(root)`` when it starts. A directory whose
  lock is free belonged to a dead process. Its groups are killed, and its scratch
  directories right under the temporary directory are removed. A process killed a
  moment ago may still hold its lock while its last threads exit. The sweep waits for
  such an owner up to ``EXITING_WAIT_SECONDS``.

A group is killed only while it is the one recorded. Either its leader is the same
process (same start time), or the leader is gone and the group still has members.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import IO

from supervisors.groups import group_members, process_exiting, signal_group
from supervisors.procstat import start_time

log = logging.getLogger("supervisors")

WARDEN_MAIN = Path(__file__).with_name("warden_main.py")
LOCK_NAME = "lock"
SCRATCH_PREFIX = "scratch-"  # warden_main's record of a scratch directory
# how long a sweep waits for the lock of an owner that is exiting (killed, lock held)
EXITING_WAIT_SECONDS = 10.0
_LOCK_POLL_SECONDS = 0.01


def still_ours(pgid: int, started: str) -> bool:
    """Group ``pgid`` is still the one whose leader started at ``started``."""
    now = start_time(pgid)
    if now is not None:
        return now == started
    return bool(group_members(pgid))


class Warden:
    """The owner's side of one warden process. Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._held: dict[int, str] = {}
        self._fences: dict[int, float] = {}
        self._scratch: set[str] = set()
        self._records: Path | None = None
        self._lock_file: IO[bytes] | None = None
        self._popen: subprocess.Popen[bytes] | None = None

    @property
    def pid(self) -> int | None:
        """The warden process's pid, once it runs."""
        return self._popen.pid if self._popen is not None else None

    def watch(self, pgid: int) -> None:
        """Hold group ``pgid`` (its leader is running): killed if this process dies."""
        started = start_time(pgid)
        if started is None:
            return  # already gone: nothing to hold
        with self._lock:
            self._held[pgid] = started
            self._tell(f"+ {pgid} {started}\n")

    def fence(self, pgid: int, seconds: float) -> None:
        """Arm a deadline for group ``pgid``. The warden SIGKILLs the group unless
        ``fence`` is called for it again within ``seconds``. The owner calls it each time
        it proves it still holds the group's work (a renewed claim). So a group dies on
        time when its owner is stopped (SIGSTOP) or cut off, even though the owner lives."""
        with self._lock:
            if pgid in self._held:
                self._fences[pgid] = seconds
                self._tell(f"f {pgid} {seconds:.3f}\n")

    def release(self, pgid: int) -> None:
        """Forget group ``pgid``, which is gone. Its number may be handed out again."""
        with self._lock:
            self._fences.pop(pgid, None)
            if self._held.pop(pgid, None) is not None:
                self._tell(f"- {pgid}\n")

    def remove_at_death(self, directory: Path) -> None:
        """Have scratch ``directory`` removed if this process dies first (SIGKILL, the OOM
        killer). The warden removes it unless this process removed it and called
        ``forget``. With records kept, a later sweep removes it if the warden died too;
        it does so only for a directory right under the temporary directory. Raises
        ValueError for a path holding a newline."""
        path = str(Path(directory).absolute())
        if "\n" in path:
            raise ValueError(f"a scratch directory's path holds a newline: {path!r}")
        with self._lock:
            self._scratch.add(path)
            self._tell(f"p {path}\n")

    def forget(self, directory: Path) -> None:
        """This process removed scratch ``directory`` itself (or keeps it)."""
        path = str(Path(directory).absolute())
        with self._lock:
            if path in self._scratch:
                self._scratch.discard(path)
                self._tell(f"u {path}\n")

    def keep_records(self, root: Path) -> Path:
        """Keep a record of each held group under ``root/<pid>/`` (see the module). This
        process holds that directory's lock while it lives. Returns the directory."""
        mine = Path(root) / str(os.getpid())
        mine.mkdir(parents=True, exist_ok=True)
        lock_file = (mine / LOCK_NAME).open("ab")
        fcntl.flock(lock_file, fcntl.LOCK_EX)
        with self._lock:
            if self._lock_file is not None:
                self._lock_file.close()
            self._lock_file, self._records = lock_file, mine
            self._tell(f"d {mine}\n")
        return mine

    def close(self) -> None:
        """Close the pipe. The warden then does what it does at this process's death: it
        kills what it still holds, removes its scratch directories and exits."""
        with self._lock:
            popen, self._popen = self._popen, None
            self._held.clear()
            self._fences.clear()
            self._scratch.clear()
        if popen is not None:
            assert popen.stdin is not None
            with contextlib.suppress(OSError):
                popen.stdin.close()
            popen.wait()

    def _tell(self, line: str) -> None:
        """Send the warden one line. Start it first if it is not running. A warden
        started again after a death is first told every group held and the record
        directory."""
        for _attempt in range(2):
            if self._popen is None or self._popen.poll() is not None:
                self._start()
            assert self._popen is not None and self._popen.stdin is not None
            try:
                self._popen.stdin.write(line.encode())
                self._popen.stdin.flush()
                return
            except OSError as err:
                log.warning("the group warden is gone (%s); starting another", err)
                self._popen = None
        log.error("could not reach a group warden: groups may outlive this process")

    def _start(self) -> None:
        popen = subprocess.Popen(
            [sys.executable, "-I", "-S", str(WARDEN_MAIN)],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            cwd="/",
            start_new_session=True,  # a signal to this process's group does not reach it
        )
        assert popen.stdin is not None
        replay = [f"+ {pgid} {started}\n" for pgid, started in self._held.items()]
        replay += [f"f {pgid} {seconds:.3f}\n" for pgid, seconds in self._fences.items()]
        replay += [f"p {path}\n" for path in sorted(self._scratch)]
        if self._records is not None:
            replay.insert(0, f"d {self._records}\n")
        popen.stdin.write("".join(replay).encode())
        popen.stdin.flush()
        self._popen = popen


_warden: Warden | None = None
_warden_lock = threading.Lock()


def warden() -> Warden:
    """This process's warden (its process starts with the first group it holds)."""
    global _warden
    with _warden_lock:
        if _warden is None:
            _warden = Warden()
        return _warden


def sweep(root: Path) -> list[int]:
    """Kill the groups recorded under ``root`` by processes that are gone, and remove
    their records. A process is gone when its directory's lock is free. Returns the
    groups killed. Call it before ``keep_records``."""
    killed: list[int] = []
    root = Path(root)
    if not root.is_dir():
        return killed
    for owner in sorted(root.iterdir()):
        if not owner.is_dir():
            continue
        try:
            lock_file = (owner / LOCK_NAME).open("ab")
        except OSError:
            continue
        with lock_file:
            if not _lock_of_dead_owner(lock_file, owner.name):
                continue  # its process lives
            for record in owner.iterdir():
                if record.name.startswith(SCRATCH_PREFIX):
                    _remove_scratch(record)
                if not record.name.isdigit():
                    continue
                pgid = int(record.name)
                with contextlib.suppress(OSError):
                    if pgid > 1 and still_ours(pgid, record.read_text().strip()):
                        with contextlib.suppress(ProcessLookupError, PermissionError):
                            signal_group(pgid, signal.SIGKILL)
                            killed.append(pgid)
        shutil.rmtree(owner, ignore_errors=True)
    return killed


def _remove_scratch(record: Path) -> None:
    """Remove the scratch directory a dead owner's record names. Only a directory right
    under the temporary directory is removed; rmtree refuses a symlink. A record naming
    anything else is left alone and goes with the records."""
    with contextlib.suppress(OSError):
        directory = Path(record.read_text())
        if directory.parent != Path(tempfile.gettempdir()):
            log.warning("a scratch record names %s, outside the temporary directory", directory)
            return
        shutil.rmtree(directory, ignore_errors=True)


def _lock_of_dead_owner(lock_file: IO[bytes], owner: str) -> bool:
    """Take the lock of records directory ``owner`` (its process's pid). Returns False
    while that process lives. An owner may hold the lock while it exits
    (`process_exiting`). Its lock goes with its last thread, so it is waited for, up to
    EXITING_WAIT_SECONDS."""
    deadline = time.monotonic() + EXITING_WAIT_SECONDS
    pause = threading.Event()  # never set: a bounded pause between tries
    while True:
        try:
            fcntl.flock(lock_file, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            exiting = owner.isdigit() and process_exiting(int(owner))
            if not exiting or time.monotonic() >= deadline:
                return False
            pause.wait(_LOCK_POLL_SECONDS)
