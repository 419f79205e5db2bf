"""A person pushing to the origin's main while the hive works (--loop), with the git
binary over the same git:// URL the hive fetches and pushes through.

Each push (`hive.chaos.plan.Push`) starts from the origin's main as it is now. A clean
one adds a file of the person's own (`people/pK.txt`): every branch cut before it then
merges by a clean three-way merge. A conflicting one rewrites the first line of the
file of an issue whose finished work is not merged yet (`in_flight`): that issue's merge
conflicts and its work is sent back. A push the origin refuses (the hive pushed first)
is made again on the new main, as a person would, up to PUSH_TRIES times.

What each push left is kept (`Pushed`): the invariant `kept_pushes` asks that main
still holds every one, none undone by a merge or a push of the hive.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from hive.chaos.plan import Push
from hive.git.safety import git_environment

# A push loses its race when the hive pushed between its fetch and its push; at a load
# average of 40 one try takes seconds, so it tries again for a while, not a few times.
PUSH_TRIES = 30
PUSH_SECONDS = 60.0
GIT_SECONDS = 60
IDENTITY = ("-c", "user.name=a person", "-c", "user.email=person@hive.invalid")


def own_file(k: int) -> str:
    return f"people/p{k}.txt"


def own_line(k: int) -> str:
    return f"a person's line {k}"


def edited_line(issue: int) -> str:
    """The first line of an issue's file as the person rewrites it."""
    return f"file {issue}, as a person wrote it"


@dataclass(frozen=True)
class Pushed:
    """A person's push that landed: its commit, the path it changed and a line it left
    there, and the issue whose file it edited (None: a file of the person's own)."""

    sha: str
    path: str
    line: str
    issue: int | None


class Person:
    def __init__(self, root: Path, url: str, file_of: Callable[[int], str]) -> None:
        self.clone = root / "person"
        self.url = url
        self.file_of = file_of
        self.env = git_environment(os.environ) | {"HOME": str(root)}
        self.pushed: list[Pushed] = []

    def push(self, push: Push, k: int, in_flight: Callable[[], Sequence[int]]) -> str:
        """Make push number `k` now; one line says what happened."""
        if not self.clone.exists():
            self._git("clone", "-q", self.url, str(self.clone), cwd=self.clone.parent)
        deadline = time.monotonic() + PUSH_SECONDS
        refused = ""
        attempt = 0
        while attempt < PUSH_TRIES and (attempt == 0 or time.monotonic() < deadline):
            attempt += 1
            self._git("fetch", "-q", "origin", "main")
            self._git("reset", "-q", "--hard", "FETCH_HEAD")
            change = self._edit(k, in_flight() if push.conflict else ())
            path, line, issue = change
            self._git("add", path)
            self._git(*IDENTITY, "commit", "-q", "-m", f"a person's push {k}")
            done = self._git("push", "-q", "origin", "HEAD:refs/heads/main", check=False)
            if done.returncode == 0:
                sha = self._git("rev-parse", "HEAD").stdout.strip()
                self.pushed.append(Pushed(sha, path, line, issue))
                what = f"#{issue}'s file" if issue is not None else path
                return f"a person pushed {sha[:12]} ({what}, try {attempt})"
            refused = _why_refused(done.stderr)
        return f"a person's push {k} was refused {attempt} times ({refused}): given up"

    def _edit(self, k: int, issues: Sequence[int]) -> tuple[str, str, int | None]:
        """Rewrite the first line of the first issue's file still as it was made, else
        write a file of the person's own: (path, the line it now holds, the issue)."""
        for issue in issues:
            target = self.clone / self.file_of(issue)
            lines = target.read_text().splitlines(keepends=True) if target.exists() else []
            if lines and lines[0] == f"file {issue}\n":
                lines[0] = edited_line(issue) + "\n"
                target.write_text("".join(lines))
                return self.file_of(issue), edited_line(issue), issue
        target = self.clone / own_file(k)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(own_line(k) + "\n")
        return own_file(k), own_line(k), None

    def _git(
        self, *args: str, cwd: Path | None = None, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["git", *args],
            cwd=cwd or self.clone,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=GIT_SECONDS,
            check=check,
        )


def _why_refused(stderr: str) -> str:
    """git's line that says why a push was refused (` ! [rejected] ... (fetch first)`)."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    named = [line for line in lines if "rejected]" in line]
    return (named or lines or ["git said nothing"])[0]
