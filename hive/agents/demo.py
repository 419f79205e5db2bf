"""The demo agent: makes the change an issue asks for, with no model and no key.

It runs as `python -m hive.agents.demo` through the command adapter (so it is stopped
like any other agent), in the worktree, and reads its brief (HIVE_BRIEF_FILE; start_turn
adds the issue's body when the brief does not already quote it). It acts on these lines,
in order, and ignores every other line:

    write `path/to/file`: one line of content     the file becomes this line
    append `path/to/file`: another line           this line is added at the end
    sleep 2.5                                     wait this many seconds (at most 3600)

A line may start with `after a send-back:` (for example
``after a send-back: append `notes.md`: fixed``): it is carried out only when the brief
carries the review's notes of a send-back (SENDBACK_HEADING), so a sample issue can fail
its review once and pass on its next attempt.

A line that starts with `write`, `append` or `sleep` but does not have this form is
reported on stdout and skipped. A path must be relative, stay inside the repository
(no `..`, no `.git`, no symlink) and inside the boundary (HIVE_BOUNDARY, one path per
line: a file, or a directory and everything under it; `.` is the whole tree); any other
path is reported and skipped. Then the files written are committed with dulwich, on the
worktree's branch, by `hive demo <demo@hive.invalid>`, with no hook run.

Exit 0 after the commit (or when the files already held the change: nothing to commit);
exit 1 when no file instruction could be carried out, or the commit failed. SIGTERM stops
it at once, during a `sleep` too: it exits 143 and leaves what it wrote so far
uncommitted. It reports its size as usage:
`HIVE-USAGE: provider=demo model=demo input=<brief bytes> output=<bytes written>`.
"""

from __future__ import annotations

import os
import posixpath
import re
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

from hive.rules.criteria import SENDBACK_HEADING  # the Queen's heading for a send-back's notes

AUTHOR = b"hive demo <demo@hive.invalid>"
SLEEP_MAX_SECONDS = 3600.0
EXIT_NOTHING_DONE = 1
EXIT_STOPPED = 128 + signal.SIGTERM
_FILE_LINE = re.compile(r"^(write|append)\s+`([^`]+)`\s*:\s?(.*)$")
_SLEEP_LINE = re.compile(r"^sleep\s+([0-9]+(?:\.[0-9]+)?)$")
_VERBS = ("write", "append", "sleep")
RESEND_PREFIX = "after a send-back:"
FORM = "write `path`: text, append `path`: text, or sleep <seconds>"


@dataclass(frozen=True)
class Instruction:
    line: int
    verb: str
    path: str = ""
    text: str = ""
    seconds: float = 0.0
    resend: bool = False


def parse(brief: str) -> tuple[list[Instruction], list[str]]:
    """The instructions in `brief`, and one problem sentence per malformed line."""
    found: list[Instruction] = []
    problems: list[str] = []
    for number, raw in enumerate(brief.splitlines(), start=1):
        line = raw.strip()
        resend = line.lower().startswith(RESEND_PREFIX)
        if resend:
            line = line[len(RESEND_PREFIX) :].strip()
        if line.split(" ", 1)[0] not in _VERBS:
            continue
        file_line = _FILE_LINE.match(line)
        sleep_line = _SLEEP_LINE.match(line)
        if file_line:
            verb, path, text = file_line.groups()
            found.append(Instruction(number, verb, path=path, text=text, resend=resend))
        elif sleep_line and float(sleep_line.group(1)) <= SLEEP_MAX_SECONDS:
            seconds = float(sleep_line.group(1))
            found.append(Instruction(number, "sleep", seconds=seconds, resend=resend))
        else:
            problems.append(f"line {number} {line[:80]!r} is not {FORM}")
    return found, problems


def boundary_from(raw: str) -> tuple[str, ...]:
    """HIVE_BOUNDARY's paths (one per line), normalised; blank lines ignored."""
    return tuple(posixpath.normpath(p.strip()) for p in raw.splitlines() if p.strip())


def path_problem(path: str, boundary: tuple[str, ...]) -> str | None:
    """Why `path` may not be touched, or None when it may (strings only, no disk)."""
    clean = posixpath.normpath(path)
    parts = clean.split("/")
    if path.startswith("/") or clean == "." or ".." in parts:
        return f"{path} is not a relative path inside the repository"
    if ".git" in parts:
        return f"{path} is inside .git"
    for entry in boundary:
        if entry == "." or clean == entry or clean.startswith(entry + "/"):
            return None
    return f"{path} is outside the boundary"


def _disk_problem(worktree: Path, path: str) -> str | None:
    """A symlink on the way would write somewhere other than the path says."""
    root = os.path.realpath(worktree)
    target = os.path.join(root, posixpath.normpath(path))
    if os.path.realpath(target) != target:
        return f"{path} goes through a symlink"
    return None


class _Stopped(BaseException):
    """SIGTERM: a BaseException, so no `except Exception` on the way swallows it."""


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    raise _Stopped


def _commit(worktree: Path, paths: list[str], issue: str) -> str | None:
    """Commit `paths` on the worktree's branch; None when nothing changed."""
    from dulwich.repo import Repo

    from hive.git.commits import commit_staged

    repo = Repo(str(worktree))
    try:
        repo.get_worktree().stage(paths)
        head_tree = repo[repo.head()].tree  # type: ignore[attr-defined]
        if repo.open_index().commit(repo.object_store) == head_tree:
            return None
        message = f"demo: issue #{issue}\n\n" + "".join(f"- {p}\n" for p in paths)
        return commit_staged(repo, message, AUTHOR)  # no hook ever runs, not even post-commit
    finally:
        repo.close()


def _apply(target: Path, ins: Instruction) -> int:
    """Carry out one write or append; the number of bytes written."""
    data = (ins.text + "\n").encode("utf-8")
    target.parent.mkdir(parents=True, exist_ok=True)
    with target.open("wb" if ins.verb == "write" else "ab") as f:
        f.write(data)
    return len(data)


def run(brief: str, worktree: Path, boundary: tuple[str, ...], issue: str) -> int:
    """Carry out `brief` in `worktree`; the exit code (see the module docstring)."""
    instructions, problems = parse(brief)
    if SENDBACK_HEADING not in brief:
        instructions = [ins for ins in instructions if not ins.resend]
    for problem in problems:
        print(f"demo: skipped {problem}")
    touched: list[str] = []
    written_bytes = 0
    try:
        for ins in instructions:
            if ins.verb == "sleep":
                print(f"demo: sleeping {ins.seconds:g} s")
                time.sleep(ins.seconds)
                continue
            refused = path_problem(ins.path, boundary) or _disk_problem(worktree, ins.path)
            if refused:
                print(f"demo: skipped line {ins.line}: {refused}")
                continue
            clean = posixpath.normpath(ins.path)
            try:
                written_bytes += _apply(worktree / clean, ins)
            except OSError as exc:  # a directory in the way, a read-only file, a full disk
                print(f"demo: skipped line {ins.line}: cannot {ins.verb} {clean}: {exc.strerror}")
                continue
            print(f"demo: {ins.verb} {clean}")
            if clean not in touched:
                touched.append(clean)
        if not touched:
            print(f"demo: nothing to do: the brief has no line of the form {FORM} I may act on")
            return EXIT_NOTHING_DONE
        try:
            sha = _commit(worktree, touched, issue)
        except Exception as exc:  # dulwich's errors: reported in one line, not a traceback
            print(f"demo: the commit failed: {type(exc).__name__}: {exc}")
            return EXIT_NOTHING_DONE
    except _Stopped:
        left = ", ".join(touched) or "nothing written"
        print(f"demo: stopped by SIGTERM; not committed: {left}")
        return EXIT_STOPPED
    print(f"demo: committed {sha}" if sha else "demo: nothing to commit: the files hold it")
    brief_bytes = len(brief.encode("utf-8"))
    print(f"HIVE-USAGE: provider=demo model=demo input={brief_bytes} output={written_bytes}")
    return 0


def main() -> int:
    signal.signal(signal.SIGTERM, _on_sigterm)
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]
    brief_file = os.environ.get("HIVE_BRIEF_FILE")
    brief = Path(brief_file).read_text(encoding="utf-8") if brief_file else sys.stdin.read()
    boundary = boundary_from(os.environ.get("HIVE_BOUNDARY", ""))
    return run(brief, Path.cwd(), boundary, os.environ.get("HIVE_ISSUE", "?"))


if __name__ == "__main__":
    sys.exit(main())
