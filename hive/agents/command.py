"""`command:<shell command>`: the agent is `/bin/sh -c <command>` in the worktree, in its
own process group (DESIGN 6).

What the agent gets (its environment, its brief) is in `command_env.py`.

Each stdout line goes to the transcript as kind "stdout", each stderr line as "stderr"
(both capped, see transcript.py); stdout lines may carry the protocol of protocol.py.
Exit 0 is `finished`. The agent's own command runs only once the turn is begun
(`begin()`, after the caller's ledger landed): the process, its group and its stop exist
from the start, as a gate (`GATE_SCRIPT`: a shell that waits for a word on a FIFO, then
execs the command in its own place); a turn stopped before `begin()` never ran its
agent, so an attempt whose row was taken meanwhile leaves no trace. When the agent's own
process exits, whatever it left running in its group is killed at once (no process is
left behind); while a stop is under way the stop's grace applies instead. The brief's
directory goes with the turn, or with the process's warden if the hive is killed. The
process is a `supervisors.WatchedProcess`: its exit comes to the turn as a
`ProcessExited`, and a stop is `stop_turn_group` (RULES 2).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import IO

from hive.agents.base import (
    ENDED_BADLY,
    ENDED_UNEXPECTEDLY,
    FINISHED,
    Turn,
    TurnContext,
    TurnStartError,
)
from hive.agents.command_env import check_program, sandbox_environment, turn_environment
from hive.agents.launch import RunAs, UserError
from hive.agents.protocol import ProtocolError, parse_refusal_line, parse_usage
from hive.agents.sandbox import program_paths
from hive.agents.sandbox_exec import Refused
from hive.agents.stopping import (
    GROUP_POLL_SECONDS,
    KILL_LANDS_MS,
    group_empty,
    group_members,
    signal_group,
    stop_turn_group,
)
from hive.agents.transcript import LINE_MAX_BYTES, STDERR, STDOUT
from supervisors.warden import warden
from supervisors.work import ProcessExited, WatchedProcess

SHELL = "/bin/sh"
BRIEF_FILE_NAME = "brief.md"
# the gate: $1 is the FIFO; on the word `go` the command after it replaces the shell; an
# end of file runs nothing (a gate left waiting dies by its stop, or by the parent-death
# signal with the hive)
GATE_SCRIPT = 'read -r go < "$1" && [ "$go" = go ] && shift && exec "$@"; exit 125'
GATE_NAME = "hive-gate"
GATE_FILE_NAME = "gate"
# After the group is empty, how long the readers may take to see the end of the pipes;
# longer means a process escaped the group (setsid) and still holds them.
READERS_JOIN_SECONDS = 0.5
READER_POLL_SECONDS = 0.05
# how long bubblewrap's own processes may take to follow the agent out
SANDBOX_SETTLE_SECONDS = 0.5


class CommandTurn(Turn):
    kill_stops_it = True
    # how much of one stdout line is read (past it, the rest of the line is dropped)
    read_line_max_bytes = LINE_MAX_BYTES

    def __init__(
        self,
        ctx: TurnContext,
        command: str,
        extra_env: Mapping[str, str] | None = None,
        argv: list[str] | None = None,
    ) -> None:
        """Run `command` with the shell, or `argv` as it is when given."""
        super().__init__(ctx)
        if not ctx.worktree.is_dir():
            raise TurnStartError(f"worktree {ctx.worktree} is not a directory")
        self._killed_at: float | None = None
        self._group_gone = False
        self._wired = threading.Event()  # set once the readers run: the exit may come first
        self._brief_dir = Path(tempfile.mkdtemp(prefix="hive-brief-"))
        # a process killed mid-turn (SIGKILL, the OOM killer) leaves no brief behind
        warden().remove_at_death(self._brief_dir)
        self._gate: int | None = None
        self._gate_opened = False
        try:
            brief_file = self._brief_dir / BRIEF_FILE_NAME
            brief_file.write_text(ctx.brief, encoding="utf-8")
            gate = self._brief_dir / GATE_FILE_NAME
            os.mkfifo(gate, 0o600)
            # read and write: never blocks, and the gate's read sees its end only when
            # this end is closed
            self._gate = os.open(gate, os.O_RDWR)
            run_as = RunAs.of(ctx.launch.user) if ctx.launch.user else None
            env = turn_environment(ctx, brief_file, extra_env, run_as)
            as_user = {}
            if run_as is not None:
                run_as.hand_over(ctx.worktree, self._brief_dir)
                as_user = run_as.popen_kwargs()
            sandbox = ctx.launch.sandboxed()
            env |= sandbox_environment(sandbox, self._brief_dir)
            # stdin is the file itself: no writer thread, no broken pipe if unread
            self._prepare(self._brief_dir, env)  # may still fill `argv` and `env`
            command_argv = argv if argv is not None else [SHELL, "-c", command]
            check_program(command_argv[0], env)
            tree, private = ctx.worktree, self._brief_dir
            readable = program_paths(command_argv[0], command)
            command_argv = sandbox.wrap(command_argv, tree=tree, private=private, readable=readable)
            confinement = sandbox.confinement(tree=tree, private=private, readable=readable)
            try:
                with brief_file.open("rb") as stdin:
                    self._process = WatchedProcess.start(
                        [SHELL, "-c", GATE_SCRIPT, GATE_NAME, str(gate), *command_argv],
                        on_exit=self._exited,
                        child_setup=confinement,
                        cwd=ctx.worktree,
                        env=env,
                        stdin=stdin,
                        stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE,
                        **as_user,
                    )
            except subprocess.SubprocessError as exc:  # the confinement raised in the child
                raise TurnStartError(f"the sandbox could not be made: {exc}") from exc
            finally:
                if confinement is not None:
                    confinement.close()
        except (OSError, TurnStartError, UserError, Refused) as exc:
            self._close_gate()
            self._remove_brief_dir()
            if isinstance(exc, TurnStartError):
                raise
            if isinstance(exc, UserError):
                raise TurnStartError(str(exc)) from exc
            raise TurnStartError(f"the agent could not start: {exc}") from exc
        popen = self._process.popen
        self.pid, self.pgid = popen.pid, self._process.pgid
        assert popen.stdout is not None and popen.stderr is not None
        self._chunks_read = 0
        self._readers = [
            threading.Thread(target=self._read, args=(popen.stdout, STDOUT), daemon=True),
            threading.Thread(target=self._read, args=(popen.stderr, STDERR), daemon=True),
        ]
        for reader in self._readers:
            reader.start()
        self._wired.set()
        self._started()

    def begin(self) -> None:
        """Open the gate (the agent's command runs now), then let the transcript flow.
        The word stays in the FIFO while this end is open, even when the gate's shell
        opens it later; the end is closed once the process exited."""
        self._open_gate()
        super().begin()

    def _open_gate(self) -> None:
        with self._lock:
            if self._gate is not None and not self._gate_opened:
                self._gate_opened = True
                os.write(self._gate, b"go\n")

    def _close_gate(self) -> None:
        """Close this end of the gate: unopened, the gate's shell reads its end and runs
        nothing."""
        with self._lock:
            gate, self._gate = self._gate, None
        if gate is not None:
            os.close(gate)

    def _remove_brief_dir(self) -> None:
        shutil.rmtree(self._brief_dir, ignore_errors=True)
        warden().forget(self._brief_dir)

    # ---- for an adapter built on this one -----------------------------------------

    def _prepare(self, private_dir: Path, env: dict[str, str]) -> None:
        """Before the start: `private_dir` is the turn's own (outside the worktree,
        removed at the end); `env` may still be changed."""

    def _stdout(self, text: str) -> str | None:
        """One stdout line: read the protocol; answer what the transcript keeps (None:
        nothing)."""
        self._protocol(text)
        return text

    def _before_cleanup(self) -> None:
        """The agent's process exited; its private directory is still there."""

    # ---- stopping ----------------------------------------------------------------

    def _stop_sequence(self) -> bool:
        """SIGTERM to the group, the grace, SIGKILL to the whole group (RULES 2)."""
        assert self.pgid is not None
        stop_turn_group(
            self.pgid,
            grace_ms=self.ctx.stop_grace_ms,
            ended=self._ended.wait,
            send=self._send,
            before_kill=self._note_kill,
        )
        return self._ended.is_set()

    def _note_kill(self) -> None:
        self.transcript.note("the grace is over: SIGKILL to the process group", patient=False)

    def _send(self, sig: int) -> None:
        """Signal the group while it is the turn's: once it emptied, its number is not."""
        assert self.pgid is not None
        with self._lock:
            if self._group_gone:
                return
            signal_group(self.pgid, sig)
            if sig == signal.SIGKILL and self._killed_at is None:
                self._killed_at = time.monotonic()

    # ---- the turn's own threads --------------------------------------------------

    def _join_readers(self) -> bool:
        """Wait for the readers to reach the end of the pipes for as long as they still
        read; False once they read nothing for READERS_JOIN_SECONDS (a process outside
        the group holds the pipes). A loaded machine may take seconds to drain a busy
        agent's last output: none of it is lost for that."""
        seen, quiet_since = self._chunks_read, time.monotonic()
        while any(reader.is_alive() for reader in self._readers):
            for reader in self._readers:
                reader.join(READER_POLL_SECONDS)
            if self._chunks_read != seen:
                seen, quiet_since = self._chunks_read, time.monotonic()
            elif time.monotonic() - quiet_since >= READERS_JOIN_SECONDS:
                return False
        return True

    def _read(self, stream: IO[bytes], kind: str) -> None:
        with stream:
            while True:
                # one byte past the cap, so the transcript sees the line is long and marks it
                cap = self.read_line_max_bytes if kind == STDOUT else LINE_MAX_BYTES
                chunk = stream.readline(cap + 1)
                self._chunks_read += 1  # a hint of progress for _join_readers
                if not chunk:
                    return
                if len(chunk) > cap and not chunk.endswith(b"\n"):
                    while True:  # drop the rest of the long line
                        rest = stream.readline(LINE_MAX_BYTES)
                        if not rest or rest.endswith(b"\n"):
                            break
                text: str | None = chunk.decode("utf-8", "replace").rstrip("\r\n")
                if kind == STDOUT and text is not None:
                    text = self._read_stdout(text)
                if text is not None:
                    self.transcript.line(kind, text)

    def _read_stdout(self, text: str) -> str | None:
        """`_stdout`, whose raise is noted, never the reader's end: a reader that stops
        leaves the agent writing to a closed pipe (it dies of SIGPIPE)."""
        try:
            return self._stdout(text)
        except Exception as exc:
            self.transcript.note(f"an output line could not be read, kept as it is: {exc!r}")
            return text

    def _protocol(self, text: str) -> None:
        try:
            refusal = parse_refusal_line(text)
            usage = parse_usage(text)
        except ProtocolError as exc:
            self.transcript.note(str(exc))
            return
        if refusal is not None:
            self._saw_refusal(refusal.kind, refusal.resets_at)
        if usage is not None:
            self._saw_usage(usage)

    def _exited(self, exited: ProcessExited) -> None:
        """The agent's own process exited (told from the watcher's thread): clear its
        group, let the readers see the end of the pipes, and finish the turn."""
        self._record_exit()
        self._wired.wait()
        self._close_gate()
        returncode = exited.returncode
        self._clear_group()
        self._begun.wait()
        if not self._join_readers():
            self.transcript.note("a process outside the turn's group still holds its output")
        try:
            self._before_cleanup()
        except Exception as exc:  # the turn still ends
            self.transcript.note(f"reading what the agent left failed: {exc}")
        self._remove_brief_dir()
        returncode = self.ctx.launch.sandboxed().exit_status(returncode)
        if returncode == 0:
            self._finish(FINISHED, exit_code=0)
        elif returncode > 0:
            self._finish(ENDED_BADLY, exit_code=returncode)
        else:
            self._finish(ENDED_UNEXPECTEDLY, signal=-returncode)

    def _clear_group(self) -> None:
        """Wait until the group is empty. With no stop under way, what the agent left
        behind is killed now; during a stop, the stopper's grace and SIGKILL apply."""
        assert self.pgid is not None
        if self.ctx.launch.sandboxed().namespaced:
            # bubblewrap's own processes end a moment after the agent: not left behind
            group_empty(self.pgid, SANDBOX_SETTLE_SECONDS)
        while group_members(self.pgid):
            with self._lock:
                stopping = self._stop_reason is not None or self.ctx.stopping.is_set()
                killed_at = self._killed_at
            if not stopping and killed_at is None:
                self._send(signal.SIGKILL)  # before the note, which may wait for begin()
                self.transcript.note("the agent left processes in its group: SIGKILL to them")
            elif killed_at is not None and time.monotonic() - killed_at > KILL_LANDS_MS / 1000:
                self.transcript.note("processes of the turn's group outlived SIGKILL")
                break
            time.sleep(GROUP_POLL_SECONDS)
        with self._lock:
            self._group_gone = True


def start_command(
    command: str, ctx: TurnContext, extra_env: Mapping[str, str] | None = None
) -> CommandTurn:
    """Start `command` as the turn's agent; the process is running when this returns."""
    if not command.strip():
        raise TurnStartError("command: needs a shell command after the colon")
    return CommandTurn(ctx, command, extra_env)
