"""Fixtures for the runtime's live tests: a Runtime on a fresh migrated database and the
sample repository, with a bee pool attached, for tests that call `run_once()` directly.
It carries the Settings it was built from, so a test builds each actor's config from
them as `hive/tree.py` does (`configs`)."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from hive import configs
from hive.actors.bee.actor import BeeActor
from hive.actors.bee.config import BeeConfig
from hive.actors.bee.host import HostActor
from hive.actors.reaper.reaper import ReaperConfig
from hive.git.repo import open_checkout
from hive.runtime import Runtime
from hive.settings import Settings
from hive.store import issues, orders
from hive.store.issues import NewIssue
from hive.store.orders import NewOrder
from hive.store.pool import make_pool
from hive.testing import hive_environ
from supervisors import ChildSpec, Pool, Restart
from tests.live.runtime import agents

AGENT = "python:tests.live.runtime.agents:"


@pytest.fixture(autouse=True)
def _release_agents() -> Iterator[None]:
    agents.RELEASE.clear()
    yield
    agents.RELEASE.set()  # a turn left waiting ends


@dataclass
class TestRuntime(Runtime):
    """A Runtime and the Settings it was built from."""

    settings: Settings = field(kw_only=True)

    @property
    def bee(self) -> BeeConfig:
        return configs.bee_config(self.settings)

    @property
    def reaper(self) -> ReaperConfig:
        return configs.reaper_config(self.settings)


@pytest.fixture
def make_runtime(
    hive_db_url: str, hive_work_url: str, hive_repo: Path, tmp_path: Path
) -> Iterator[Callable[..., TestRuntime]]:
    """`make_runtime(**variables)`: a Runtime (its own workdir and clone) with a started
    bee pool and its host actor attached, as the tree would give the actors; `variables`
    override settings.
    Its store is `hive_work_url` (PgBouncer's when the test runs through it), its LISTEN
    `hive_db_url`."""
    made: list[tuple[TestRuntime, Pool, Any]] = []

    def make(**variables: str) -> TestRuntime:
        workdir = tmp_path / f"work-{len(made)}"
        variables.setdefault("AGENT", AGENT + "finish")
        settings = Settings.from_env(hive_environ(hive_db_url, hive_repo, workdir, **variables))
        checkout = open_checkout(str(hive_repo), workdir, settings.base_ref)
        prepare = hive_work_url == hive_db_url
        db = make_pool(hive_work_url, max_size=8, name=f"t-{uuid.uuid4().hex[:6]}", prepare=prepare)
        rt = TestRuntime(db=db, url=hive_db_url, checkout=checkout, settings=settings)
        bee = ChildSpec("bee", BeeActor.start, restart=Restart.TEMPORARY, shutdown=30.0)
        host = HostActor.start(rt.host, rt.names)
        pool = rt.host.attach(Pool("bees", bee))
        pool.start()
        made.append((rt, pool, host))
        return rt

    yield make
    for rt, pool, host in reversed(made):
        pool.stop(timeout=60)
        host.stop(timeout=10)
        rt.db.close()
        rt.checkout.repo.close()


def add_issue(
    db: Any, number: int, boundary: tuple[str, ...] = ("src/app.py",), **fields: Any
) -> None:
    issues.upsert(db, number, NewIssue(title=f"issue {number}", boundary=boundary, **fields))


def queue(
    rt: Runtime, issue: int, key_index: int | None = 0, fingerprint: str | None = None
) -> None:
    """A queued order for `issue` on key `key_index`, as a Queen in elsewhere mode writes
    it (the fingerprint of this runtime's key at that index unless given)."""
    from hive.rules.keys import key_slots

    keys = {k.index: k for k in key_slots(rt.settings.worker_keys)}
    if fingerprint is None and key_index in keys:
        fingerprint = keys[key_index].fingerprint
    add_issue(rt.db, issue)
    new = NewOrder(
        issue,
        f"queen-{issue}",
        "main",
        owned_paths=("src/app.py",),
        key_index=key_index,
        key_fingerprint=fingerprint,
        brief=f"brief of #{issue}",
    )
    assert orders.insert(rt.db, new, queued=True) is orders.Insertion.WRITTEN


class Inbox:
    """Registered under an actor's name in its place: records each message told to the
    name, with what `look()` answered at that moment, in the sender's thread."""

    def __init__(self, look: Callable[[], Any] = lambda: None) -> None:
        self.look = look
        self.told: list[tuple[Any, Any]] = []
        self.heard = threading.Event()

    def tell(self, message: Any) -> None:
        self.told.append((message, self.look()))
        self.heard.set()

    def messages(self) -> list[Any]:
        return [message for message, _ in self.told]


def eventually(check: Callable[[], Any], timeout_seconds: float = 10.0) -> Any:
    """Poll `check` until it returns something true (a real condition, with a deadline)."""
    import time

    deadline = time.monotonic() + timeout_seconds
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"not true within {timeout_seconds}s: {check}")
        time.sleep(0.02)
