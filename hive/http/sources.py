"""The surface's facts, read from the real store (hive.store) and the checkout (hive.git).

Shared by the HTTP routes and the command line (`hive export`, `hive issue`, `hive
status`), so both answer alike. `db` is anything the store functions take: a pool for
the server's request threads, one connection for a command.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg
from dulwich.errors import NotGitRepository
from dulwich.objects import ObjectID
from dulwich.repo import Repo
from prometheus_client import CollectorRegistry

from hive.errors import HiveError
from hive.git.bundles import bundle
from hive.git.listing import list_branches
from hive.git.repo import REPO_DIRNAME, branch_ref, resolve
from hive.http.export import BundleRef, NothingKnown, NoWorkBeyondBase
from hive.http.server import Surface, store_probe
from hive.metrics import QueueNumbers
from hive.settings import Settings
from hive.store import bundles, issues, migrate, orders
from hive.store.connect import check_reachable, database_url, where
from hive.store.db import Db

log = logging.getLogger("hive.http")

CREATE_ATTEMPTS = 3  # two creates may pick the same next number; the loser retries
# The brief is the agent's whole prompt: long, and nobody's business in a listing.
HIDDEN_ORDER_FIELDS = frozenset({"brief"})


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
            raise NoWorkBeyondBase(f"queen-{issue} has no commits beyond {self.base}")
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
                raise NoWorkBeyondBase(f"queen-{issue} has no commits beyond {self.base}")
            return out.data

        return read


def order_rows(db: Db) -> list[dict[str, Any]]:
    """Every order as a JSON-ready dict (no brief; keys appear as index and fingerprint)."""
    rows = []
    for order in orders.listing(db):
        row = {
            name: _plain(value)
            for name, value in dataclasses.asdict(order).items()
            if name not in HIDDEN_ORDER_FIELDS
        }
        rows.append(row)
    return rows


def queue_numbers(db: Db, now: Callable[[], datetime] = lambda: datetime.now(UTC)) -> QueueNumbers:
    """Queue depth, orders in flight and the oldest queued order's age, from the orders
    not yet finished (few: bounded by the hive's width and its queue)."""
    in_flight = orders.listing(db, unfinished_only=True)
    queued = [o for o in in_flight if o.queued_at is not None and o.claimed_by is None]
    oldest = min((o.queued_at for o in queued if o.queued_at is not None), default=None)
    age = max(0.0, (now() - oldest).total_seconds()) if oldest is not None else 0.0
    return QueueNumbers(queued=len(queued), in_flight=len(in_flight), oldest_queued_seconds=age)


def add_issue(db: Db, issue: issues.NewIssue) -> int:
    """Create `issue` with the next free number and return the number."""
    for attempt in range(1, CREATE_ATTEMPTS + 1):
        try:
            return issues.create(db, issue).number
        except psycopg.errors.UniqueViolation:
            if attempt == CREATE_ATTEMPTS:
                raise
    raise AssertionError("unreachable")


def _plain(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)  # uuid and the like


def store_surface(
    settings: Settings,
    db: Db,
    url: str,
    registry: CollectorRegistry,
    draining: Callable[[], bool],
) -> Surface:
    """The `Surface` a process serves: every route on the store `db` (a pool: the routes
    run on request threads), readiness from `draining` and a probe of `url`."""
    return Surface(
        registry=registry,
        draining=draining,
        store_reachable=store_probe(url),
        exports=StoreExports.from_settings(settings, db),
        orders=lambda: order_rows(db),
        add_issue=lambda issue: add_issue(db, issue),
    )


@contextmanager
def store_connection(settings: Settings) -> Iterator[psycopg.Connection[Any]]:
    """One autocommit connection for a command, after checking the database is reachable
    and migrated (each problem one line, naming host and port, never a password)."""
    url = database_url(settings)
    check_reachable(url)
    version = migrate.check(url)
    if version < migrate.known_version():
        raise HiveError(
            f"the database at {where(url)} has hive schema version {version}, not "
            f"{migrate.known_version()}: run `hive migrate` first"
        )
    with psycopg.connect(url, autocommit=True) as conn:
        yield conn
