"""The sandbox's parts that run in a turn's processes: Landlock and the seccomp filter
(applied in the turn's first process, between fork and exec: sandbox.Confinement), and
the launcher a closed network starts inside bubblewrap.

The launcher runs as `python -I -S -c <LAUNCH> --relay PORT=SOCKET --no-unix-sockets --
PROGRAM ARGS...` (sandbox.py's LAUNCH imports this module from its own directory, its
compiled form included, and nothing of the hive). It listens on 127.0.0.1:PORT in the
sandbox's own network namespace and carries each connection to the Unix socket SOCKET
(the runner's proxy), then refuses socket(AF_UNIX) to itself and what it execs, gives
SIGTERM its default back (bubblewrap outside ignores it), and execs the program. A filter
it cannot install exits 126 with one line.

Landlock refuses every file access outside the granted paths, every signal and ptrace to a
process outside the sandbox, and abstract Unix sockets outside it; a kernel with an ABI
older than LANDLOCK_ABI_MIN is refused.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
from typing import Any

LANDLOCK_ABI_MIN = 6  # scoped signals and abstract Unix sockets
EXIT_NO_SANDBOX = 126
_SYS_CREATE_RULESET, _SYS_ADD_RULE, _SYS_RESTRICT_SELF = 444, 445, 446
_PR_SET_NO_NEW_PRIVS = 38
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH, _RULE_NET_PORT = 1, 2

# filesystem rights (ABI 1 to 5), by bit
_EXECUTE, _WRITE_FILE, _READ_FILE, _READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
_REMOVE_DIR, _REMOVE_FILE, _MAKE_CHAR, _MAKE_DIR = 1 << 4, 1 << 5, 1 << 6, 1 << 7
_MAKE_REG, _MAKE_SOCK, _MAKE_FIFO, _MAKE_BLOCK = 1 << 8, 1 << 9, 1 << 10, 1 << 11
_MAKE_SYM, _REFER, _TRUNCATE, _IOCTL_DEV = 1 << 12, 1 << 13, 1 << 14, 1 << 15
FS_ALL = (1 << 16) - 1
FILE_RIGHTS = _EXECUTE | _WRITE_FILE | _READ_FILE | _TRUNCATE | _IOCTL_DEV
READ_RIGHTS = _EXECUTE | _READ_FILE | _READ_DIR
WRITE_RIGHTS = FS_ALL & ~(_MAKE_CHAR | _MAKE_BLOCK)
_NET_BIND_TCP, _NET_CONNECT_TCP = 1 << 0, 1 << 1
_SCOPE_ABSTRACT_UNIX, _SCOPE_SIGNAL = 1 << 0, 1 << 1
RELAY_CHUNK_BYTES = 65536

# seccomp: refuse socket(AF_UNIX, ...) with EPERM; a foreign architecture's calls too
_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 22, 2
_RET_ALLOW, _RET_EPERM = 0x7FFF0000, 0x00050000 | 1
_LD_ABS, _JEQ, _JGE, _RET = 0x20, 0x15, 0x35, 0x06
_AF_UNIX = 1
_X32_BIT = 0x40000000
# machine -> (AUDIT_ARCH_*, the number of socket(2))
_ARCHES = {"x86_64": (0xC000003E, 41), "aarch64": (0xC00000B7, 198)}


class _RulesetAttr(ctypes.Structure):
    _fields_ = [
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    ]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


class _NetPort(ctypes.Structure):
    _fields_ = [("allowed_access", ctypes.c_uint64), ("port", ctypes.c_uint64)]


class _Filter(ctypes.Structure):
    _fields_ = [
        ("code", ctypes.c_ushort),
        ("jt", ctypes.c_ubyte),
        ("jf", ctypes.c_ubyte),
        ("k", ctypes.c_uint32),
    ]


class _Program(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_Filter))]


class Refused(Exception):
    """The kernel cannot give the sandbox asked for."""


_LIBC: list[ctypes.CDLL] = []


def _libc() -> ctypes.CDLL:
    """The C library, loaded once (a turn's first process calls it between fork and
    exec, where the less it does the better)."""
    if not _LIBC:
        _LIBC.append(ctypes.CDLL(None, use_errno=True))
    return _LIBC[0]


def landlock_abi() -> int:
    """The kernel's Landlock ABI version; 0 when it has none."""
    abi = _libc().syscall(_SYS_CREATE_RULESET, None, ctypes.c_size_t(0), _CREATE_RULESET_VERSION)
    return max(int(abi), 0)


def ruleset(ro: list[str], rw: list[str], port: int | None, open_network: bool) -> int:
    """A Landlock ruleset (its descriptor) granting `ro` and `rw` (see the module); TCP
    only to `port` unless `open_network`. Nothing is restricted until `enforce`."""
    libc = _libc()
    abi = landlock_abi()
    if abi < LANDLOCK_ABI_MIN:
        raise Refused(f"Landlock ABI {abi} (at least {LANDLOCK_ABI_MIN} needed)")
    attr = _RulesetAttr(FS_ALL, 0 if open_network else _NET_BIND_TCP | _NET_CONNECT_TCP)
    attr.scoped = _SCOPE_ABSTRACT_UNIX | _SCOPE_SIGNAL
    fd = int(libc.syscall(_SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.sizeof(attr), 0))
    if fd < 0:
        raise Refused(f"landlock_create_ruleset: {os.strerror(ctypes.get_errno())}")
    try:
        for paths, rights in ((ro, READ_RIGHTS), (rw, WRITE_RIGHTS)):
            for path in paths:
                allow_path(fd, path, rights)
        if port is not None and not open_network:
            rule = _NetPort(_NET_CONNECT_TCP, port)
            if libc.syscall(_SYS_ADD_RULE, fd, _RULE_NET_PORT, ctypes.byref(rule), 0) != 0:
                raise Refused(f"landlock_add_rule(port {port}): {os.strerror(ctypes.get_errno())}")
    except BaseException:
        os.close(fd)
        raise
    return fd


def enforce(fd: int) -> None:
    """Restrict this process (and all it starts) by the ruleset `fd`, for good."""
    libc = _libc()
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise Refused(f"prctl(NO_NEW_PRIVS): {os.strerror(ctypes.get_errno())}")
    if libc.syscall(_SYS_RESTRICT_SELF, fd, 0) != 0:
        raise Refused(f"landlock_restrict_self: {os.strerror(ctypes.get_errno())}")


def allow_path(ruleset_fd: int, path: str, rights: int) -> None:
    """Grant `rights` beneath `path` (a file: its file rights only); a path that is not
    there grants nothing."""
    try:
        target = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return
    try:
        if not os.path.isdir(path):
            rights &= FILE_RIGHTS
        rule = _PathBeneath(rights, target)
        if _libc().syscall(_SYS_ADD_RULE, ruleset_fd, _RULE_PATH_BENEATH, ctypes.byref(rule), 0):
            raise Refused(f"landlock_add_rule({path}): {os.strerror(ctypes.get_errno())}")
    finally:
        os.close(target)


def unix_socket_filter() -> Any:
    """The seccomp program that refuses socket(AF_UNIX) (and a foreign architecture's
    calls), built once; `install_filter` loads it."""
    machine = os.uname().machine
    if machine not in _ARCHES:
        raise Refused(f"no seccomp filter for {machine}")
    arch, socket_nr = _ARCHES[machine]
    code = [
        (_LD_ABS, 0, 0, 4),  # seccomp_data.arch
        (_JEQ, 0, 5, arch),
        (_LD_ABS, 0, 0, 0),  # seccomp_data.nr
        (_JGE, 3, 0, _X32_BIT),
        (_JEQ, 0, 3, socket_nr),
        (_LD_ABS, 0, 0, 16),  # seccomp_data.args[0], its low half
        (_JEQ, 0, 1, _AF_UNIX),
        (_RET, 0, 0, _RET_EPERM),
        (_RET, 0, 0, _RET_ALLOW),
    ]
    filters = (_Filter * len(code))(*[_Filter(*line) for line in code])
    program = _Program(len(code), filters)
    program.keep = filters  # the array lives as long as the program
    return program


def install_filter(program: Any) -> None:
    """Load a seccomp program into this process (NO_NEW_PRIVS is set first)."""
    libc = _libc()
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise Refused(f"prctl(NO_NEW_PRIVS): {os.strerror(ctypes.get_errno())}")
    if libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(program), 0, 0) != 0:
        raise Refused(f"seccomp: {os.strerror(ctypes.get_errno())}")


def refuse_unix_sockets() -> None:
    """Install the seccomp filter that refuses socket(AF_UNIX)."""
    install_filter(unix_socket_filter())


def relay(port: int, target: str) -> None:
    """Serve 127.0.0.1:`port` in a child process, each connection carried to `target`."""
    import socket  # only a closed network needs it: the launcher starts faster without
    import threading

    server = socket.create_server(("127.0.0.1", port))
    if os.fork() != 0:
        server.close()
        return
    try:
        while True:
            conn, _ = server.accept()
            threading.Thread(target=_carry, args=(conn, target), daemon=True).start()
    finally:
        os._exit(0)


def _carry(conn: Any, target: str) -> None:
    import socket
    import threading

    upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        upstream.connect(target)
    except OSError:
        conn.close()
        return
    threading.Thread(target=pipe, args=(upstream, conn), daemon=True).start()
    pipe(conn, upstream)


def pipe(source: Any, sink: Any) -> None:
    """Carry `source`'s bytes to `sink` until the end, then end `sink`'s writing half
    (the egress proxy's tunnels use it too)."""
    try:
        while chunk := source.recv(RELAY_CHUNK_BYTES):
            sink.sendall(chunk)
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            sink.shutdown(1)  # SHUT_WR


def main(argv: list[str]) -> int:
    relays: list[tuple[int, str]] = []
    no_unix = False
    args = iter(argv)
    for arg in args:
        if arg == "--":
            break
        if arg == "--no-unix-sockets":
            no_unix = True
        elif arg == "--relay":
            listen, _, sock = next(args).partition("=")
            relays.append((int(listen), sock))
        else:
            print(f"hive sandbox: unknown option {arg}", file=sys.stderr)
            return EXIT_NO_SANDBOX
    command = list(args)
    if not command:
        print("hive sandbox: no program after --", file=sys.stderr)
        return EXIT_NO_SANDBOX
    try:
        for relay_port, sock in relays:
            relay(relay_port, sock)
        if no_unix:
            refuse_unix_sockets()
    except (Refused, OSError) as exc:
        print(f"hive sandbox: the sandbox could not be made: {exc}", file=sys.stderr)
        return EXIT_NO_SANDBOX
    # bubblewrap outside ignores SIGTERM; the agent gets its default back
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        os.execvp(command[0], command)
    except OSError as exc:
        print(f"hive sandbox: {command[0]}: {exc.strerror}", file=sys.stderr)
        return 127


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
