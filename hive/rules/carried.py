"""What a branch may carry beyond base (issue 25): the boundary rule for every path a
commit changes, the agent's own commits included, the same as for what the salvage
commits from the worktree.

A changed path is refused when a name along it is not a plain name (empty, `.`, `..`,
`.git` in any case, a slash, a control character), when its text is not a plain path
(`hive.rules.shape.plain_path`), when it lies outside the boundary (a mode change is a
change like any other), when its new mode is not one git writes for a file, a link or a
submodule, or when it is a symlink whose target, followed through the tree's own links,
leads out of the repository. The caller reads the trees; nothing here does I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from hive.rules import shape, text
from hive.rules.criteria import Decision
from hive.rules.states import (
    ESCALATE,
    SENDBACK,
    SENDBACK_CEILING,
    VERDICT_ESCALATE,
    VERDICT_SENDBACK,
)

FILE_MODE = 0o100644
EXEC_MODE = 0o100755
LINK_MODE = 0o120000
GITLINK_MODE = 0o160000
CARRIED_MODES = frozenset({FILE_MODE, EXEC_MODE, LINK_MODE, GITLINK_MODE})

OUTSIDE = "is outside the boundary"
LINKS_OUT = "is a symlink that leads out of the repository"
NOT_PLAIN = "is not a plain path"
# how many refused paths a sentence names before it counts the rest
NAMED_MAX = 20


def in_boundary(path: str, boundary: Iterable[str]) -> bool:
    """Whether repository path `path` is one of the boundary's paths or under one of them
    (a boundary entry may name a directory)."""
    return any(path == b or path.startswith(b + "/") for b in boundary)


def name_fault(name: str) -> str | None:
    """Why one name of a tree (a path element) may not be carried, or None."""
    if name in ("", ".", ".."):
        return f"holds the name {name!r}"
    if "/" in name or "\\" in name:
        return "holds a name with a slash"
    if any(ord(c) < 32 or ord(c) == 127 for c in name):
        return shape.PathFault.CONTROL.value
    if name.lower() == ".git":
        return shape.PathFault.GIT.value
    return None


def change_fault(
    path: str,
    new_mode: int | None,
    boundary: Iterable[str],
    link_target: str | None = None,
    symlinks: Mapping[str, str] | None = None,
) -> str | None:
    """Why the change of `path` to `new_mode` (None: deleted) may not be carried, or None.

    `link_target` is the target of a new symlink; `symlinks` maps the other links of the
    tree it lands in to their targets, so a chain through them is followed."""
    plain = shape.plain_path(path)
    if isinstance(plain, shape.PathFault):
        return plain.value
    if plain != path:
        return NOT_PLAIN
    if not in_boundary(path, boundary):
        return OUTSIDE
    if new_mode is None:
        return None
    if new_mode not in CARRIED_MODES:
        return f"has the file mode {new_mode:o}, which git does not write"
    if new_mode == LINK_MODE:
        links = {**(symlinks or {}), path: link_target or ""}
        if leads_out(path, links):
            return LINKS_OUT
    return None


def leads_out(path: str, symlinks: Mapping[str, str]) -> bool:
    """Whether `path`, followed through the tree's `symlinks` (path -> target) as the
    kernel would, one name at a time (a `..` after a link climbs from where the link
    led, not from where it sits), leaves the repository; a chain past MAX_SYMLINK_HOPS
    is a loop, and leads nowhere safe."""
    done: list[str] = []
    todo = path.split("/")
    hops = 0
    while todo:
        part = todo.pop(0)
        if part in ("", "."):
            continue
        if part == "..":
            if not done:
                return True
            done.pop()
            continue
        target = symlinks.get("/".join([*done, part]))
        if target is None:
            done.append(part)
            continue
        hops += 1
        if hops > shape.MAX_SYMLINK_HOPS or target.startswith("/"):
            return True
        todo = target.split("/") + todo
    return False


def refused_sentence(refused: Iterable[tuple[str, str]]) -> str:
    """`path reason` for each refused path, `; `-joined, at most NAMED_MAX named; a
    control character in a path is written as an escape (`text.shown`)."""
    items = sorted(set(refused))
    named = [f"{text.shown(path)} {reason}" for path, reason in items[:NAMED_MAX]]
    if len(items) > NAMED_MAX:
        named.append(f"and {len(items) - NAMED_MAX} more")
    return "; ".join(named)


def refused_tree_decision(reason: str, earlier_sendbacks: int) -> Decision:
    """A review's verdict on a branch it may not judge (a path the boundary refuses, a
    tree that cannot be written out): sent back once with the reason, escalated once it
    has been sent back SENDBACK_CEILING times already. Never a wait: the same tree would
    be refused again."""
    if earlier_sendbacks >= SENDBACK_CEILING:
        note = f"sent back {earlier_sendbacks} times and still refused: {reason}"
        return Decision(ESCALATE, VERDICT_ESCALATE, note)
    return Decision(SENDBACK, VERDICT_SENDBACK, reason)
