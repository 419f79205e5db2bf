"""An attempt's branch head in the Queen's clone: imported from its stored bundle when a
runner made it elsewhere (or this clone is new)."""

from __future__ import annotations

from typing import Any

from dulwich.repo import Repo

from hive.git.importing import import_bundle
from hive.store import bundles


def head_here(db: Any, repo: Repo, issue: int, head_sha: str | None) -> str | None:
    """`head_sha` once it is in `repo` (imported from the stored bundle if needed); None
    when there is no head, or the stored bundle is of another head."""
    if head_sha is None:
        return None
    if head_sha.encode() in repo:
        return head_sha
    stored = bundles.get(db, issue)
    if stored is None or stored.head_sha != head_sha:
        return None
    import_bundle(repo, issue, stored.data)
    return head_sha
