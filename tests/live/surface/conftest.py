"""A real repository, the hive's real checkout of it (hive.git), a real database (the
`hive_db_url` fixture) and a real HTTP server over loopback."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import pytest

from hive.git.repo import open_checkout
from hive.http import ExportServer, HttpConfig, store_surface
from hive.metrics import HiveMetrics
from hive.rules.states import Outcome
from hive.services.orders import queue_numbers
from hive.settings import Settings
from hive.store import endings, orders
from hive.store.bundles import NewBundle
from hive.testing import git, make_repo

TOKEN = "live-token-0123456789"
BASE = "main"


@dataclass
class World:
    upstream: Path  # the team's repository (main, and queen branches a bee made)
    workdir: Path  # HIVE_WORKDIR: the hive's checkout is workdir/repo.git
    db_url: str
    db: psycopg.Connection[Any]

    @property
    def checkout(self) -> Path:
        return self.workdir / "repo.git"

    def commit_on(self, branch: str, name: str, text: str) -> str:
        """A commit on `branch` of upstream (created from main when absent); its sha."""
        git(
            "checkout", "-q", "-B", branch, branch if self._has(branch) else BASE, cwd=self.upstream
        )
        (self.upstream / name).write_text(text)
        git("add", name, cwd=self.upstream)
        git("commit", "-qm", f"change {name}", cwd=self.upstream)
        sha = git("rev-parse", "HEAD", cwd=self.upstream)
        git("checkout", "-q", BASE, cwd=self.upstream)
        return sha

    def _has(self, branch: str) -> bool:
        return bool(git("branch", "--list", branch, cwd=self.upstream))

    def branch_into_checkout(self, branch: str) -> None:
        """Put upstream's `branch` into the hive's checkout, as a local bee would leave it."""
        git("push", "-q", str(self.checkout), f"{branch}:refs/heads/{branch}", cwd=self.upstream)

    def store_bundle(self, issue: int, branch: str) -> str:
        """End an order of `issue` the way a runner does, storing the bundle of
        main..branch (written by the git binary) in queen_bundle; the head sha."""
        path = self.upstream / f"{branch}.bundle"
        git("bundle", "create", "-q", str(path), f"{BASE}..{branch}", cwd=self.upstream)
        head = git("rev-parse", branch, cwd=self.upstream)
        order = self.queue_order(issue)
        assert orders.claim(self.db, "runner-1") is not None
        data = NewBundle(branch, BASE, None, head, path.read_bytes())
        fence = orders.Fence(issue, order.conversation_id, "runner-1")
        assert endings.end(self.db, endings.OrderEnding(fence, Outcome.FINISHED, bundle=data))
        return head

    def queue_order(self, issue: int) -> orders.Order:
        new = orders.NewOrder(issue=issue, branch=f"queen-{issue}", base=BASE, brief="do it")
        assert orders.insert(self.db, new, queued=True) is orders.Insertion.WRITTEN
        made = orders.get(self.db, issue)
        assert made is not None
        return made

    def fetch_bundle(self, data: bytes, branch: str) -> str:
        """`git fetch` the bundle into a fresh clone of upstream; the branch's sha there."""
        clone = self.upstream.parent / f"clone-{branch}-{len(data)}"
        git("clone", "-q", str(self.upstream), str(clone), cwd=self.upstream.parent)
        path = clone.parent / f"fetched-{branch}.bundle"
        path.write_bytes(data)
        git("bundle", "verify", "-q", str(path), cwd=clone)
        git("fetch", "-q", str(path), f"{branch}:refs/heads/fetched-{branch}", cwd=clone)
        return git("rev-parse", f"fetched-{branch}", cwd=clone)


@pytest.fixture
def world(tmp_path: Path, hive_db_url: str) -> Iterator[World]:
    upstream = make_repo(tmp_path / "upstream", {"README.md": "hello\n"}, branch=BASE)
    workdir = tmp_path / "work"
    open_checkout(str(upstream), workdir, BASE).repo.close()
    with psycopg.connect(hive_db_url, autocommit=True) as db:
        yield World(upstream, workdir, hive_db_url, db)


def settings_for(world: World, **extra: str) -> Settings:
    return Settings.from_env(
        {
            "HIVE_DATABASE_URL": world.db_url,
            "HIVE_WORKDIR": str(world.workdir),
            "HIVE_BASE_REF": BASE,
            **extra,
        }
    )


@pytest.fixture
def serve(world: World) -> Iterator[Callable[..., ExportServer]]:
    """`serve(token=None, draining=lambda: False, board_public=False)`: the hive's HTTP
    server on `world`."""
    started: list[ExportServer] = []

    def start(
        token: str | None = None,
        draining: Callable[[], bool] = lambda: False,
        *,
        board_public: bool = False,
    ) -> ExportServer:
        settings = settings_for(world)
        metrics = HiveMetrics()
        metrics.watch_queue(lambda: queue_numbers(world.db))
        surface = store_surface(settings, world.db, world.db_url, metrics.registry, draining)
        config = HttpConfig(port=0, api_token=token, board_public=board_public)
        server = ExportServer(config, surface)
        server.start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()
