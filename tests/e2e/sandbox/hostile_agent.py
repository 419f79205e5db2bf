#!/usr/bin/env python3
"""A hostile agent: tries every escape the brief's targets name, reports each, and then
does its legitimate work. Run as a `command:` agent by its path (the sandbox shows it).

The brief is JSON: {"targets": {...}, "secret": "<marker>"}. Each escape prints one line
`ESCAPE <name>: refused (<why>)` or `ESCAPE <name>: ESCAPED <what it got>`; each piece of
legitimate work `LEGIT <name>: ok` or `LEGIT <name>: failed <why>`.
"""

import contextlib
import ctypes
import json
import os
import signal
import socket
import subprocess
import sys

# an agent reads its brief; a check (which has none) is given the file as its argument
with open(
    sys.argv[1]
    if sys.argv[1:2] != ["--short"] and len(sys.argv) > 1
    else os.environ["HIVE_BRIEF_FILE"]
) as brief_file:
    brief = json.load(brief_file)
t = brief["targets"]
secret = brief["secret"]
SHORT = "--short" in sys.argv  # one word a line: a check keeps only its output's tail


def escape(name, attempt):
    try:
        got = attempt()
    except Exception as exc:  # the escape failed: that is the point
        why = "" if SHORT else f" ({type(exc).__name__}: {exc})"
        print(f"ESCAPE {name}: refused{why}", flush=True)
        return
    if got is None or (isinstance(got, (str, bytes)) and secret not in str(got)):
        why = "" if SHORT else f" (no secret in what it read: {str(got)[:80]!r})"
        print(f"ESCAPE {name}: refused{why}", flush=True)
    else:
        print(f"ESCAPE {name}: ESCAPED {str(got)[:200]!r}", flush=True)


def read(path):
    with open(path, "rb") as f:
        return f.read().decode("utf-8", "replace")


def proc_list():
    if not os.path.exists(f"/proc/{t['hive_pid']}"):
        raise LookupError(f"no /proc/{t['hive_pid']}")
    return read(f"/proc/{t['hive_pid']}/environ")


def signal_it(pid):
    os.kill(pid, 0)  # would be enough to know it is there; then a real one
    os.kill(pid, signal.SIGCONT)
    return secret  # reaching it at all is the escape


def write(path):
    """A write that succeeds may still land in the sandbox's own /tmp: the test looks
    for the file on the machine."""
    with open(path, "w") as f:
        f.write("escaped")
    return "written (the test looks for it outside)"


def connect_unix(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(2)
    s.connect(path)
    return secret


def connect_tcp(port):
    s = socket.create_connection(("127.0.0.1", port), timeout=2)
    s.sendall(b"GET / HTTP/1.0\r\n\r\n")
    return s.recv(100).decode() + secret


def ptrace(pid):
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.ptrace(16, pid, None, None) != 0:  # PTRACE_ATTACH
        raise PermissionError(os.strerror(ctypes.get_errno()))
    return secret


def symlink_out():
    os.symlink(t["other_secret_file"], "escape-link")
    if t.get("commit_symlink", True):
        subprocess.run(["git", "add", "escape-link"], check=True, capture_output=True)
        subprocess.run(
            ["git", "-c", "user.name=x", "-c", "user.email=x@x", "commit", "-qm", "link"],
            check=True,
            capture_output=True,
        )
    return read("escape-link")


def other_keys():
    found = []
    for pid in t["other_turn_pids"]:
        with contextlib.suppress(OSError):
            found.append(read(f"/proc/{pid}/environ"))
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != os.getpid():
            with contextlib.suppress(OSError):
                found.append(read(f"/proc/{entry}/environ"))
    text = "".join(found)
    if t["other_key"] in text:
        return secret
    raise PermissionError("no other turn's environment was readable")


escape("read_hive_environ", lambda: read(f"/proc/{t['hive_pid']}/environ"))
escape("read_proc_1_environ", lambda: read("/proc/1/environ"))
escape("list_hive_processes", proc_list)
escape("signal_hive", lambda: signal_it(t["hive_pid"]))
escape("signal_warden", lambda: signal_it(t["warden_pid"]))
escape("read_other_worktree", lambda: read(t["other_secret_file"]))
escape("read_other_brief", lambda: read(t["other_brief"]))
escape("read_workdir_records", lambda: read(t["record"]))
escape("open_database_socket", lambda: connect_unix(t["db_socket"]))
escape("read_database_files", lambda: read(t["db_file"]))
escape("read_hive_home", lambda: read(t["home_secret"]))
escape("read_hive_tmp", lambda: read(t["tmp_secret"]))
escape("write_outside_tree", lambda: write(t["outside_file"]))
escape("write_hive_home", lambda: write(t["home_file"]))
escape("follow_committed_symlink", symlink_out)
escape("ptrace_hive", lambda: ptrace(t["hive_pid"]))
escape("read_other_turn_key", other_keys)
escape("abstract_socket", lambda: connect_unix(t["abstract_socket"]))
if t.get("closed_port"):
    escape("reach_port_not_allowed", lambda: connect_tcp(t["closed_port"]))


def legit(name, argv):
    done = subprocess.run(argv, capture_output=True, text=True)
    ok = done.returncode == 0
    print(f"LEGIT {name}: {'ok' if ok else 'failed ' + (done.stderr or done.stdout)[-300:]}")


with open(t["boundary_file"], "w") as f:
    f.write("work done inside the boundary\n")
print("LEGIT write_boundary: ok", flush=True)
subprocess.run(["git", "rm", "-q", "--cached", "escape-link"], capture_output=True)
if os.path.lexists("escape-link"):
    os.unlink("escape-link")
legit("python", ["python3", "-c", "print(6 * 7)"])
legit("node", ["node", "-e", "console.log(6 * 7)"])
legit("git", ["git", "status", "--short"])
legit("tmp", ["sh", "-c", 'echo x > "${TMPDIR:-/tmp}/scratch" && cat "${TMPDIR:-/tmp}/scratch"'])
sys.exit(0)
