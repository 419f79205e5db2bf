"""A runner's boot on a real repository: from `hive serve` started with an empty workdir
to its first claim, its clone of `HIVE_REPO_URL` included (the bulk of it).

A throwaway hive (`hive.bench.processes`) on a scratch database: a Queen on the
repository queues one order (its boundary a file of base) for runners elsewhere; then a
runner process starts and the time until the order is claimed by it is measured. Once
with the whole history, once with `HIVE_CLONE_DEPTH` when a depth is given.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from hive.bench.processes import LocalHive, local_hive
from hive.settings import Settings
from hive.store import issues
from hive.store.issues import NewIssue
from hive.store.orders import Order

ISSUE = 1
QUEUE_SECONDS = 300.0
BOOT_SECONDS = 1800.0


def runner_boot(
    settings: Settings, queen_url: str, runner_url: str, base: str, boundary: str, depth: int
) -> float:
    """Seconds from a runner's start to its first claim, cloning `runner_url` (only
    `depth` commits of base when above 0); the Queen clones `queen_url`."""
    with local_hive(settings) as hive:
        issues.upsert(hive.db, ISSUE, NewIssue(title="boot", boundary=(boundary,)))
        (hive.ctl / f"{ISSUE}.hold").touch()  # the turn waits: only the claim counts
        hive.queen(HIVE_REPO_URL=queen_url, HIVE_BASE_REF=base)
        hive.wait(_queued(hive), QUEUE_SECONDS, "the Queen to queue the order")
        started = time.monotonic()
        hive.start(
            "runner",
            "runner",
            HIVE_REPO_URL=runner_url,
            HIVE_BASE_REF=base,
            HIVE_CLONE_DEPTH=str(depth),
        )
        hive.wait(lambda: hive.claimed_by(ISSUE, "runner"), BOOT_SECONDS, "the runner's claim")
        return time.monotonic() - started


def _queued(hive: LocalHive) -> Callable[[], Order | None]:
    def queued() -> Order | None:
        order = hive.order(ISSUE)
        return order if order is not None and order.queued_at is not None else None

    return queued
