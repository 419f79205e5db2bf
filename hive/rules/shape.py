"""The task's shape (RULES 6): when an issue is work, and one clear reason when it is not.

A boundary names 1..12 paths, each a real file of the repository at base, or a new file
whose directory exists and which the body cites. `plain_path` is the one text rule for a
boundary path (intake, the Queen and the bee's git work all use it); no path goes
through a symlink out of the repository, nor through a symlinked directory inside it
(the bee refuses to write there, so the Queen does not dispatch it). The caller passes
in what it read at base (the files, the directories, the symlinks with their targets):
rules do no I/O.
"""

from __future__ import annotations

import enum
import posixpath
from collections.abc import Iterable, Mapping
from pathlib import PurePosixPath

MAX_BOUNDARY_PATHS = 12
NEVER_TASK_LABELS = frozenset({"epic", "roadmap"})
# A symlink chain longer than this is a loop, as the kernel's ELOOP would say.
MAX_SYMLINK_HOPS = 40


class PathFault(enum.Enum):
    """Why the text of a boundary path names no place inside a repository; the value is
    the sentence that follows the path in a message."""

    EMPTY = "is empty"
    CONTROL = "holds a control character (a NUL or a newline, say)"
    ABSOLUTE = "is absolute; name it from the repository root"
    BACKSLASH = "holds a backslash; separate directories with '/'"
    CLIMBS = "climbs out with '..'"
    GIT = "points into .git"
    WHOLE = "names the whole repository; name the files"


def plain_path(path: str) -> str | PathFault:
    """`path` normalised (surrounding spaces, `./` and doubled or trailing `/` dropped)
    when its text names a place inside a repository, else the fault that says why not."""
    if any(ord(c) < 32 or ord(c) == 127 for c in path):
        return PathFault.CONTROL
    text = path.strip(" ")
    if not text:
        return PathFault.EMPTY
    if text.startswith(("/", "\\")):
        return PathFault.ABSOLUTE
    if "\\" in text:
        return PathFault.BACKSLASH
    parts = PurePosixPath(text).parts  # it drops `.` and empty components
    if ".." in parts:
        return PathFault.CLIMBS
    if any(p.lower() == ".git" for p in parts):
        return PathFault.GIT
    if not parts:
        return PathFault.WHOLE
    return "/".join(parts)


def _inside(path: str) -> bool:
    """A normalised relative path stays inside the repository root (absolute targets are
    refused before they are joined, so only a leading `..` can leave)."""
    return path != ".." and not path.startswith("../")


def resolve(path: str, symlinks: Mapping[str, str]) -> str | None:
    """`path` with every symlink along it followed, or None when it leaves the repository.

    `symlinks` maps a link's path (relative to the root) to its target as stored at base.
    """
    parts = path.split("/")
    done: list[str] = []
    hops = 0
    while parts:
        done.append(parts.pop(0))
        here = "/".join(done)
        target = symlinks.get(here)
        if target is None:
            continue
        hops += 1
        if hops > MAX_SYMLINK_HOPS or target.startswith("/"):
            return None
        joined = posixpath.normpath(posixpath.join(posixpath.dirname(here), target))
        if not _inside(joined):
            return None
        parts = ([] if joined == "." else joined.split("/")) + parts
        done = []
    return "/".join(done)


def through_symlink(path: str, symlinks: Mapping[str, str]) -> str | None:
    """The first directory of `path` (not `path` itself) that is a symlink, or None: a
    write through it lands where git does not follow, so the bee refuses such a path."""
    parts = path.split("/")
    for end in range(1, len(parts)):
        prefix = "/".join(parts[:end])
        if prefix in symlinks:
            return prefix
    return None


def path_problem(
    path: str,
    body: str,
    files: frozenset[str],
    dirs: frozenset[str],
    symlinks: Mapping[str, str],
) -> str | None:
    """Why one boundary path is not allowed, or None."""
    plain = plain_path(path)
    if isinstance(plain, PathFault):
        return f"boundary path {path!r} {plain.value}"
    real = resolve(plain, symlinks)
    if real is None:
        return f"boundary path {path!r} goes through a symlink out of the repository"
    link = through_symlink(plain, symlinks)
    if link is not None:  # the bee refuses it too (hive.git.safety.disk_problem)
        return (
            f"boundary path {path!r} passes through the symlink {link!r}: name the file"
            f" by its real path {real!r}"
        )
    if real in files:
        return None
    if real in dirs:
        return f"boundary path {path!r} is a directory; name the files"
    parent = posixpath.dirname(real)
    if parent and parent not in dirs:
        return f"boundary path {path!r} names no file at base and its directory does not exist"
    if plain not in body:
        return f"boundary path {path!r} names no file at base and the body does not cite it"
    return None


def shape_problem(
    labels: Iterable[str],
    boundary: Iterable[str],
    body: str,
    files: frozenset[str],
    dirs: frozenset[str],
    symlinks: Mapping[str, str],
) -> str | None:
    """The one reason an issue is not work, or None when it is a task."""
    never = sorted(NEVER_TASK_LABELS.intersection(labels))
    if never:
        return f"labelled {never[0]!r}, and an issue so labelled is never a task"
    paths = list(boundary)
    if not paths:
        return "no boundary: name 1 to 12 files the work may touch"
    if len(paths) > MAX_BOUNDARY_PATHS:
        return f"the boundary names {len(paths)} paths; at most {MAX_BOUNDARY_PATHS}"
    if len(set(paths)) != len(paths):
        twice = next(p for p in paths if paths.count(p) > 1)
        return f"boundary path {twice!r} is listed twice"
    for path in paths:
        problem = path_problem(path, body, files, dirs, symlinks)
        if problem is not None:
            return problem
    return None
