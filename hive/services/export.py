"""Taking work out without a push credential: the bundle of `base..queen-<issue>`.

One lookup serves `GET /queen/export/<issue>` and `hive export ISSUE`: this process's
checkout first (the branch is here: the freshest work), else the bundle a runner stored
in `queen_bundle`. A refusal is NothingKnown (404, exit 3) or NoWorkBeyondBase (409,
exit 4).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from dulwich.errors import NotGitRepository
from dulwich.objects import ObjectID
from dulwich.repo import Repo

from hive.git.bundles import bundle
from hive.git.listing import list_branches
from hive.git.repo import REPO_DIRNAME, branch_ref, resolve
from hive.rules.branches import branch_name
from hive.services.errors import Conflict, NotFound
from hive.settings import Settings
from hive.store import bundles, orders
from hive.store.db import Db

log = logging.getLogger("hive.services")


class NothingKnown(NotFound):
    """No branch, no stored bundle: the issue's work is unknown or still running."""


class NoWorkBeyondBase(Conflict):
    """The issue's branch or last turn left no commits beyond base."""


def bundle_name(issue: int) -> str:
    return f"{branch_name(issue)}.bundle"


@dataclass(frozen=True)
class BundleRef:
    """A bundle that can be served: its head is known before its bytes are read, so a
    conditional request (If-None-Match) costs no bundle write."""

    issue: int
    head_sha: str
    source: str  # "checkout" or "table"
    read: Callable[[], bytes]


class ExportSource(Protocol):
    def branches(self) -> list[dict[str, Any]]:
        """Every `queen-*` branch with commits beyond base, as JSON-ready dicts."""
        ...

    def find(self, issue: int) -> BundleRef:
        """The issue's bundle; NothingKnown or NoWorkBeyondBase when there is none."""
        ...


def checkout_path(settings: Settings) -> Path:
    """Where this process's clone lives (hive.git's `open_checkout`)."""
    return Path(settings.workdir) / REPO_DIRNAME


class StoreExports:
    """`ExportSource` over this process's checkout (when it has one) and `queen_bundle`."""

    def __init__(self, db: Db, repo_path: Path | None, base: str, max_bytes: int) -> None:
        self.db = db
        self.repo_path = repo_path
        self.base = base
        self.max_bytes = max_bytes

    @classmethod
    def from_settings(cls, settings: Settings, db: Db) -> StoreExports:
        return cls(db, checkout_path(settings), settings.base_ref, settings.bundle_max_bytes)

    def _repo(self) -> Repo | None:
        # opened per call: a dulwich Repo is not shared between request threads
        if self.repo_path is None or not self.repo_path.exists():
            return None
        try:
            return Repo(str(self.repo_path))
        except NotGitRepository:
            log.warning("%s is not a git repository; exporting from the store only", self.repo_path)
            return None

    def branches(self) -> list[dict[str, Any]]:
        found: dict[int, dict[str, Any]] = {}
        for info in bundles.listing(self.db):
            found[info.issue] = {
                "issue": info.issue,
                "branch": info.branch,
                "head_sha": info.head_sha,
                "base_sha": info.base_sha,
                "source": "table",
                "size": info.size,
                "created_at": info.created_at.isoformat(),
            }
        repo = self._repo()
        if repo is not None:
            with repo:
                for branch in list_branches(repo, self.base):
                    found[branch.issue] = {
                        "issue": branch.issue,
                        "branch": branch.branch,
                        "head_sha": branch.head_sha,
                        "commits": branch.commits,
                        "changed_files": list(branch.changed_files),
                        "source": "checkout",
                    }
        return [{**found[n], "export": f"/queen/export/{n}"} for n in sorted(found)]

    def find(self, issue: int) -> BundleRef:
        branch_here = False
        repo = self._repo()
        if repo is not None:
            with repo:
                ref = branch_ref(issue)
                if ref in repo.refs:
                    branch_here = True
                    head = repo.refs[ref]
                    base_sha = ObjectID(resolve(repo, self.base).encode())
                    if any(True for _ in repo.get_walker(include=[head], exclude=[base_sha])):
                        return BundleRef(issue, head.decode(), "checkout", self._reader(issue))
        stored = bundles.get(self.db, issue)
        if stored is not None:
            data = stored.data
            return BundleRef(issue, stored.head_sha, "table", lambda: bytes(data))
        order = orders.get(self.db, issue)
        if branch_here:
            raise NoWorkBeyondBase(f"{branch_name(issue)} has no commits beyond {self.base}")
        if order is not None and order.finished_at is not None:
            raise NoWorkBeyondBase(
                f"issue {issue}'s last turn ended ({order.outcome}) with no commits beyond base"
            )
        if order is not None:
            raise NothingKnown(
                f"issue {issue}'s turn is still running; its bundle is stored when it ends"
            )
        raise NothingKnown(f"nothing is known of issue {issue}: no branch, no bundle, no order")

    def _reader(self, issue: int) -> Callable[[], bytes]:
        def read() -> bytes:
            repo = self._repo()
            if repo is None:
                raise NothingKnown(f"the checkout at {self.repo_path} went away")
            with repo:
                out = bundle(repo, issue, self.base, self.max_bytes)
            if out is None:
                raise NoWorkBeyondBase(f"{branch_name(issue)} has no commits beyond {self.base}")
            return out.data

        return read
