"""A process's groups never outlive it: the warden, the leader's parent-death signal,
and the sweep of what an earlier incarnation left.

A group started with ``start_new_session=True`` is out of reach of whatever kills its
starter, so a process killed by SIGKILL (or the OOM killer) would leave its groups
running. Three things stop that:

- The **warden**: a small helper process (``warden_main.py``, started at the first
  group) that holds the read end of a pipe only this process writes to. It is told of
  each group as it starts and once it is gone; the end of the pipe is its owner's death,
  and it then SIGKILLs every group it still holds, at once. It also removes the
  scratch directories it was given (``remove_at_death``) and not told of again. It
  ignores SIGINT, SIGTERM and SIGHUP: it ends when its owner does.
- The **parent-death signal** (``PR_SET_PDEATHSIG``) of each group's leader: SIGKILL to
  the leader when the thread that started it ends. Groups are started from one spawner
  thread that lives as long as the process (``supervisors.work``), so that is the
  process's death. It reaches the leader only: the warden reaches the rest.
- The **records**: with ``keep_records(root)`` the warden keeps one file per held group
  under ``root/<pid>/``, a directory this process holds a lock on. A later process with
  the same root calls ``sweep(root)`` at start: every directory whose lock is free
  belonged to a process that died (with its warden), and its groups are killed (and its
  scratch directories right under the temporary directory removed). A
  process killed a moment ago may still hold its lock while its last threads exit
  (the thread that started its groups already gone, its leader thread perhaps not yet
  a zombie): a locked directory whose owner is exiting is waited for, up to
  ``EXITING_WAIT_SECONDS``.

A group is killed only while it is the one recorded: its leader is the same process
(same start time), or the leader is gone and the group still has members.
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
        """Group ``pgid`` is SIGKILLed by the warden unless ``fence`` is called for it
        again within ``seconds``: the owner calls it each time it proves it still holds
        the group's work (a renewed claim), so a group whose owner is stopped (SIGSTOP)
        or cut off dies on time even though the owner lives."""
        with self._lock:
            if pgid in self._held:
                self._fences[pgid] = seconds
                self._tell(f"f {pgid} {seconds:.3f}\n")

    def release(self, pgid: int) -> None:
        """Group ``pgid`` is gone: forget it (its number may be handed out again)."""
        with self._lock:
            self._fences.pop(pgid, None)
            if self._held.pop(pgid, None) is not None:
                self._tell(f"- {pgid}\n")

    def remove_at_death(self, directory: Path) -> None:
        """Scratch ``directory`` is removed by the warden if this process dies (SIGKILL,
        the OOM killer) before it removes it itself and calls ``forget``; with records
        kept, by a later sweep if the warden died too (only one right under the
        temporary directory)."""
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
        """Keep a record of each held group under ``root/<pid>/`` (see the module) and
        hold that directory's lock while this process lives; returns the directory."""
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
        """Close the pipe: the warden kills what it still holds and removes its scratch
        directories, as at this process's death, and exits."""
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
        """Send one line, starting the warden first (or again, if it died: it is then
        told every group held and the record directory)."""
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
    """Kill the groups recorded under ``root`` by processes that are gone (their lock is
    free), and remove their records; the groups killed. Call it before ``keep_records``."""
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
    """Remove the scratch directory a dead owner's record names: only one right under
    the temporary directory, where scratch directories live (rmtree refuses a symlink);
    a record naming anything else is left alone (and goes with the records)."""
    with contextlib.suppress(OSError):
        directory = Path(record.read_text())
        if directory.parent != Path(tempfile.gettempdir()):
            log.warning("a scratch record names %s, outside the temporary directory", directory)
            return
        shutil.rmtree(directory, ignore_errors=True)


def _lock_of_dead_owner(lock_file: IO[bytes], owner: str) -> bool:
    """Take the lock of records directory ``owner`` (its process's pid); False while its
    process lives. An owner that holds it while it exits (`process_exiting`): its lock
    goes with its last thread, waited for up to EXITING_WAIT_SECONDS."""
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
