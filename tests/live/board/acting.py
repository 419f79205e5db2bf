"""Issues put where a person acts on them from the board, and the Queen's publish job
run by hand (tests only)."""

from __future__ import annotations

from hive.git.repo import open_checkout
from hive.jobs import engine
from hive.jobs.publish import PublishConfig, Publisher
from hive.metrics import HiveMetrics
from hive.rules.jobs import JobKind, Step
from hive.store import issues, jobs
from hive.store.issues import NewIssue
from tests.live.surface.conftest import BASE
from tests.one_job import run_one_job


def add(world, n: int, title: str = "Greet", **fields) -> None:
    fields.setdefault("boundary", ("README.md",))
    issues.upsert(world.db, n, NewIssue(title=title, **fields))


def accepted(world, n: int, title: str = "Greet") -> None:
    """Issue `n` with finished work the reviewer accepted, at the merge gate."""
    add(world, n, title)
    world.commit_on(f"queen-{n}", f"f{n}.txt", "work\n")
    world.store_bundle(n, f"queen-{n}")
    world.db.execute(
        "UPDATE hive.queen_dispatch SET review_state = 'accept', reviewed_at = now()"
        " WHERE issue = %s",
        (n,),
    )


class Queen:
    """The publish job of `world`'s accepted issues, run one pass at a time."""

    def __init__(self, world) -> None:
        self.world = world
        checkout = open_checkout(str(world.upstream), world.workdir, BASE)
        config = PublishConfig(repo_url=str(world.upstream), base=BASE)
        self.publisher = Publisher(world.db, checkout, HiveMetrics(), config)

    def publish_job(self, n: int) -> None:
        jobs.create(self.world.db, JobKind.PUBLISH, n, Step.CHECKS, attempt=1)

    def run(self) -> engine.RunResult:
        return run_one_job(self.world.db, "test-queen", self.publisher.handlers())
