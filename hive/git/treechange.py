"""The change between two trees of a repository, as a kept tree (`hive.git.kept`) needs it
to bring what it holds to the next commit: the paths to remove, the entries to write and
the directories to make, every name on the new side checked as `scratch_tree` checks it.
It runs each time a kept tree is brought forward."""

from __future__ import annotations

import os
import stat

from dulwich.index import validate_path_element_default
from dulwich.repo import Repo

from hive.git.repo import GitError
from hive.git.status import tree_entries

Entry = tuple[int, bytes]  # (mode, hex sha) of a file, symlink or gitlink


def tree_change(
    repo: Repo,
    old: bytes | None,
    new: bytes,
    prefix: str,
    removed: list[str],
    added: dict[str, Entry],
    made_dirs: list[str],
) -> None:
    """The change from tree `old` to tree `new` under `prefix`: paths removed (a
    directory as itself), entries added or changed, directories to make (parents
    first). Every name of a tree read on the new side is checked as `scratch_tree`
    checks it; a subtree the same on both sides is not read."""
    if old == new:
        return
    store = repo.object_store
    before = {name: (mode, sha) for name, mode, sha in tree_entries(store, old)} if old else {}
    after: dict[bytes, tuple[int, bytes]] = {}
    for name, mode, sha in tree_entries(store, new):
        if not name or b"/" in name or b"\0" in name or not validate_path_element_default(name):
            raise GitError(f"refusing to write the path element {name!r}")
        after[name] = (mode, sha)
    for name, (mode, _sha) in before.items():
        now = after.get(name)
        if now is None or stat.S_ISDIR(mode) != stat.S_ISDIR(now[0]):
            removed.append(prefix + os.fsdecode(name))
    for name, (mode, sha) in after.items():
        if before.get(name) == (mode, sha):
            continue
        path = prefix + os.fsdecode(name)
        was = before.get(name)
        if stat.S_ISDIR(mode):
            kept_dir = was is not None and stat.S_ISDIR(was[0])
            if not kept_dir:
                made_dirs.append(path)
            tree_change(
                repo,
                was[1] if kept_dir and was else None,
                sha,
                path + "/",
                removed,
                added,
                made_dirs,
            )
        else:
            added[path] = (mode, sha)
