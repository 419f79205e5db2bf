"""What an issue may hold at the door (issue 25): counts, path lengths, twins.

An issue comes from anyone who can reach the API or label an issue on GitHub. Its lists
are counted once duplicates are collapsed (a path named twice is one path), and past a
bound the issue is refused with a sentence naming the bound. A boundary path is checked
as the file systems the work will meet would take it: a component of at most NAME_MAX
bytes, a whole path that leaves room under PATH_MAX for the worktree's own, and no two
paths that name one file on macOS or Windows (the same text in NFC and NFD, or in two
cases): a checkout there would write one over the other.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable

# GitHub allows at most 100 labels on an issue
LABELS_MAX = 100
# an issue's body, in characters (what a person, the API, GitHub or a shaper may write)
BODY_MAX_CHARS = 60_000
CRITERIA_MAX = 100
# the shape rule takes at most 12 paths as work (shape.MAX_BOUNDARY_PATHS); past this the
# issue is not stored at all
BOUNDARY_PATHS_MAX = 100
# a file name's bytes (NAME_MAX on Linux, macOS and Windows' NTFS in UTF-16 units)
NAME_MAX_BYTES = 255
# a boundary path's bytes: PATH_MAX (4096) less room for the worktree's own path
PATH_MAX_BYTES = 3072


def collapsed(items: Iterable[str]) -> tuple[str, ...]:
    """`items` without repeats, in their first order."""
    return tuple(dict.fromkeys(items))


def count_problem(name: str, count: int, most: int) -> str | None:
    """The sentence for a list `name` of `count` items past `most`, or None."""
    if count <= most:
        return None
    return f"{name}: {count} items, at most {most} (duplicates count once)"


def path_length_problem(path: str) -> str | None:
    """Why `path` (normalised, `/`-separated) is too long for a file system, or None."""
    size = len(path.encode("utf-8", "surrogatepass"))
    if size > PATH_MAX_BYTES:
        return f"is {size} bytes long, at most {PATH_MAX_BYTES}"
    for part in path.split("/"):
        part_size = len(part.encode("utf-8", "surrogatepass"))
        if part_size > NAME_MAX_BYTES:
            return f"has a name of {part_size} bytes ({part[:20]}...), at most {NAME_MAX_BYTES}"
    return None


def twin_key(path: str) -> str:
    """What `path` is on a file system that folds Unicode forms and case (macOS, Windows)."""
    return unicodedata.normalize("NFC", path).casefold()


def twins(paths: Iterable[str]) -> tuple[str, str] | None:
    """Two different paths among `paths` (or among their directories) that one such file
    system takes as one, or None."""
    seen: dict[str, str] = {}
    for path in paths:
        parts = path.split("/")
        for end in range(1, len(parts) + 1):
            prefix = "/".join(parts[:end])
            other = seen.setdefault(twin_key(prefix), prefix)
            if other != prefix:
                return other, prefix
    return None
