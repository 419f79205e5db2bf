"""Long work outside the message handler. The work is a subprocess in its own process
group, watched by a thread that tells the actor when it ends.

The rule is this. A pykka stop is a message, queued behind the one being handled, and a
thread cannot be killed. So a handler that runs for an hour makes its actor unstoppable
for an hour. The pattern::

    class BeeActor(SupervisedActor):
        def run_turn(self, argv):                      # a handler: returns at once
            self.turn = WatchedProcess.start(argv, on_exit=self.actor_ref.tell, owner=self)

        def on_receive(self, message):                 # the exit arrives as a message
            if isinstance(message, ProcessExited): ...

        def on_stop(self):
            if self.turn: self.turn.terminate(grace_seconds=3.0)

The process gets its own process group and the actor registers it. So a supervisor that
must kill the actor (a missed deadline, a hard stop) kills the whole group. Every signal
goes through ``supervisors.groups``, the one place that signals and stops a group.

The group never outlives this process (``supervisors.warden``). One spawner thread that
lives as long as the process starts it. Its leader gets SIGKILL as its parent-death
signal. The process's warden holds the group until its leader has exited and the group
is empty. When this process dies, the warden kills any group its owner left running.

The leader's first steps run no Python in the child. So ``subprocess`` starts it with
``vfork`` instead of copying this whole process; a ``preexec_fn`` would force the full
fork, under the interpreter's lock. First ``setpriv --pdeathsig KILL`` sets the
parent-death signal. Then a shell kills itself when its parent is already another
process, which means this one died before the signal was set. Then the shell execs the
program in its own place, keeping the pid of the group's leader.

A ``child_setup`` (a sandbox's, Python between fork and exec) takes the full fork as
before, with the two steps in Python. So does a machine without a ``setpriv`` that
knows ``--pdeathsig`` (util-linux 2.33 or newer).
"""

from __future__ import annotations

import ctypes
import errno
import functools
import logging
import os
import queue
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from supervisors.actor import SupervisedActor
from supervisors.groups import GroupStop, group_empty, group_members, signal_group, stop_group
from supervisors.warden import warden

log = logging.getLogger("supervisors")

_PR_SET_PDEATHSIG = 1


def _load_prctl() -> Callable[..., int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    prctl.restype = ctypes.c_int
    return prctl


_prctl = _load_prctl()


def _die_with_parent(parent: int, then: Callable[[], None] | None = None) -> Callable[[], None]:
    """Run in the child before exec. It asks for SIGKILL when the starting thread ends,
    and kills the child at once if the parent is already gone (it died between the fork
    and this call). Then it runs `then`, the caller's own step (a sandbox's). A raise
    there fails the start."""

    def setup() -> None:
        if _prctl is not None:
            _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:
            os.kill(os.getpid(), signal.SIGKILL)
        if then is not None:
            then()

    return setup


SHELL = "/bin/sh"
# the shell's first step in a leader: its parent is still the starter, else it dies
# (after setpriv set the parent-death signal: a starter that dies later sends it)
_PARENT_CHECK = '[ "$PPID" = {parent} ] || kill -9 $$; '
# what the shell then runs for an argv that is not a shell's own `-c` script
_EXEC_ARGV = 'exec "$0" "$@"'
# Popen arguments the wrapped start does not express: they take the full fork
_UNWRAPPED_KWARGS = ("executable", "shell")
SETPRIV_PROBE_SECONDS = 10.0


@functools.cache
def setpriv() -> str | None:
    """The ``setpriv`` that sets a parent-death signal, probed once. None without one."""
    program = shutil.which("setpriv") if sys.platform.startswith("linux") else None
    works = False
    if program is not None:
        try:
            done = subprocess.run(
                [program, "--pdeathsig", "KILL", "--", "true"],
                capture_output=True,
                timeout=SETPRIV_PROBE_SECONDS,
                check=False,
            )
            works = done.returncode == 0
        except (OSError, subprocess.SubprocessError):
            pass
    if not works:
        log.warning(
            "process groups start with a full fork of this process: no setpriv here sets "
            "a parent-death signal (util-linux 2.33 or newer)"
        )
        return None
    return program


def wrapped(argv: Sequence[str], parent: int, program: str) -> list[str]:
    """``argv`` started through ``program`` (setpriv) and the shell's parent check (see
    the module). A shell's own ``-c`` script takes the check in front, one shell fewer."""
    check = _PARENT_CHECK.format(parent=parent)
    prefix = [program, "--pdeathsig", "KILL", "--", SHELL, "-c"]
    if len(argv) >= 3 and argv[0] == SHELL and argv[1] == "-c":
        return [*prefix, check + argv[2], *argv[3:]]
    return [*prefix, check + _EXEC_ARGV, *argv]


def _check_program(argv: Sequence[str], popen_kwargs: dict[str, Any]) -> None:
    """Raise as Popen would for a program that cannot start (the shell would say it
    in the child instead)."""
    program = argv[0]
    found: str | None
    if os.sep in program:
        candidate = os.path.join(popen_kwargs.get("cwd") or "", program)
        found = candidate if os.path.exists(candidate) else None
    else:
        path = os.pathsep.join(os.get_exec_path(popen_kwargs.get("env")))
        found = shutil.which(program, mode=os.F_OK, path=path)
    if found is None:
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), program)
    if os.path.isdir(found) or not os.access(found, os.X_OK):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), program)


def _popen(
    argv: Sequence[str], child_setup: Callable[[], None] | None, popen_kwargs: dict[str, Any]
) -> subprocess.Popen[Any]:
    """Start the leader, on the spawner thread. It is wrapped when it can be, else the two
    steps run as ``preexec_fn`` (see the module)."""
    parent = os.getpid()
    program = setpriv()
    if (
        child_setup is None
        and program is not None
        and argv
        and not any(name in popen_kwargs for name in _UNWRAPPED_KWARGS)
    ):
        _check_program(argv, popen_kwargs)
        return subprocess.Popen(
            wrapped(argv, parent, program), start_new_session=True, **popen_kwargs
        )
    setup = _die_with_parent(parent, child_setup)
    return subprocess.Popen(list(argv), start_new_session=True, preexec_fn=setup, **popen_kwargs)


class _Spawner:
    """One thread, as long-lived as the process, that starts every group's leader. A
    parent-death signal fires when the thread that started the child ends. So that
    thread must be one that ends only with the process."""

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[tuple[Callable[[], Any], Future[Any]]] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def run(self, job: Callable[[], Any]) -> Any:
        """Run ``job`` on the spawner thread and answer its result (or raise its error)."""
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._serve, name="supervisors-spawner", daemon=True
                )
                self._thread.start()
        done: Future[Any] = Future()
        self._jobs.put((job, done))
        return done.result()

    def _serve(self) -> None:
        while True:
            job, done = self._jobs.get()
            try:
                done.set_result(job())
            except BaseException as exc:
                done.set_exception(exc)


_spawner = _Spawner()


@dataclass(frozen=True)
class ProcessExited:
    """Told to the owner when the watched process ended."""

    pid: int
    returncode: int


class WatchedProcess:
    def __init__(self, popen: subprocess.Popen[Any], owner: SupervisedActor | None) -> None:
        self.popen = popen
        self.pgid = popen.pid  # start_new_session: the child leads its own group
        self.exited = threading.Event()
        self._owner = owner

    @classmethod
    def start(
        cls,
        argv: Sequence[str],
        *,
        on_exit: Callable[[ProcessExited], Any] | None = None,
        owner: SupervisedActor | None = None,
        child_setup: Callable[[], None] | None = None,
        **popen_kwargs: Any,
    ) -> WatchedProcess:
        """Start ``argv`` in a new session, its own process group. ``on_exit`` is called
        from the watcher thread with a ``ProcessExited``; ``actor_ref.tell`` fits. The
        warden holds the group from its start until it is empty after ``on_exit``
        returned (see the module)."""
        if "preexec_fn" in popen_kwargs:
            raise TypeError("WatchedProcess.start sets its own preexec_fn")
        popen: subprocess.Popen[Any] = _spawner.run(lambda: _popen(argv, child_setup, popen_kwargs))
        watched = cls(popen, owner)
        warden().watch(watched.pgid)
        if owner is not None:
            owner.add_process_group(watched.pgid)

        def watch() -> None:
            returncode = popen.wait()
            if owner is not None:
                owner.discard_process_group(watched.pgid)
            watched.exited.set()
            try:
                if on_exit is not None:
                    on_exit(ProcessExited(popen.pid, returncode))
            finally:
                if not group_members(watched.pgid):
                    warden().release(watched.pgid)

        threading.Thread(target=watch, name=f"watch-{popen.pid}", daemon=True).start()
        return watched

    def signal(self, signum: int) -> bool:
        """Send ``signum`` to the whole group. False when the group is gone."""
        return signal_group(self.pgid, signum)

    def ended(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for the process to exit and its group to empty."""
        deadline = time.monotonic() + timeout
        if not self.exited.wait(timeout):
            return False
        return group_empty(self.pgid, max(0.0, deadline - time.monotonic()))

    def terminate(self, grace_seconds: float = 3.0, kill_lands_seconds: float = 3.0) -> GroupStop:
        """SIGTERM to the group, up to ``grace_seconds``, then SIGKILL to the group and up
        to ``kill_lands_seconds``. Safe after the process ended (``GroupStop.ENDED``)."""
        if self.ended(0):
            return GroupStop.ENDED
        return stop_group(
            self.pgid,
            grace_seconds=grace_seconds,
            kill_lands_seconds=kill_lands_seconds,
            ended=self.ended,
        )

    def kill(self) -> None:
        """SIGKILL to the whole group now, without waiting."""
        signal_group(self.pgid, signal.SIGKILL)
