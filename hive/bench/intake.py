"""intake: from an issue's insert to its queued order, with the Queen's tick left long.

A real Queen (`hive serve`, role queen, elsewhere mode, `HIVE_QUEEN_TICK_SECONDS` 30 as
by default) and one runner (a `command:` agent that ends at once) on a scratch database.
`--samples` issues are added one at a time, each as `hive issue add` adds it (the
service's `add` on a connection of this process's own: another process than the
Queen's), each once the one before it ended, so nothing holds it. The figure is the
order's `queued_at` less the issue's `created_at`, both the server's clock: what the
NOTIFY on `hive_issues` saves. Before it, an issue from another process waited for the
tick: half of it on average (15 s), all of it at worst.
"""

from __future__ import annotations

import argparse
import random
import time
from functools import partial
from typing import Any

from hive.bench.arguments import whole
from hive.bench.processes import FILES, local_hive
from hive.errors import HiveError
from hive.services import issues as issue_service
from hive.settings import Settings
from hive.store import reports
from hive.store.db import one
from hive.store.issues import NewIssue

P50_GOAL_MS = 50.0
P99_GOAL_MS = 250.0
TICK_SECONDS = "30"  # the default: only the NOTIFY can make a sample quick
POLL_SECONDS = "15"  # the runner's default poll
START_SECONDS = 60.0
SAMPLE_SECONDS = 30.0  # a deadline per sample, well under two ticks
# between two samples, so each lands at a random point of the Queen's idle wait
GAP_SECONDS = (0.0, 0.1)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--samples", type=whole(1, FILES), default=50, help=f"issues one at a time (50; {FILES})"
    )
    parser.add_argument("--keep", action="store_true", help="keep the directory and its logs")


def run(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    with local_hive(settings, keep=args.keep) as hive:
        extra = {"HIVE_QUEEN_TICK_SECONDS": TICK_SECONDS, "HIVE_PUBLISH": "off"}
        hive.queen(**extra)
        hive.start("intake-runner", "runner", HIVE_RUNNER_SECONDS=POLL_SECONDS)
        hive.wait(lambda: hive.registered("intake-runner") or None, START_SECONDS, "runner up")
        # the Queen's first round (at her start) is over: the next comes by NOTIFY or tick
        hive.wait(lambda: reports.latest(hive.db, 1) or None, START_SECONDS, "a first round")
        queued: list[float] = []
        for n in range(1, args.samples + 1):
            time.sleep(random.uniform(*GAP_SECONDS))
            issue = NewIssue(title=f"intake {n}", boundary=(f"files/f{n}.txt",))
            number = issue_service.add(hive.db, issue)
            row = hive.wait(
                partial(_queued, hive.db, number), SAMPLE_SECONDS, f"#{number} queued", poll=0.005
            )
            queued.append(float(row[0]))
            hive.wait(partial(_ended, hive.db, number), SAMPLE_SECONDS, f"#{number} ended")
    if len(queued) != args.samples:
        raise HiveError(f"bench intake: {len(queued)} of {args.samples} issues were queued")
    queued.sort()
    p50 = queued[len(queued) // 2]
    p99 = queued[min(len(queued) - 1, int(len(queued) * 0.99))]
    return {
        "samples": args.samples,
        "queen_tick_seconds": float(TICK_SECONDS),
        "issue_to_queued_p50_ms": p50,
        "issue_to_queued_p99_ms": p99,
        "issue_to_queued_max_ms": queued[-1],
        "p50_goal_ms": P50_GOAL_MS,
        "p99_goal_ms": P99_GOAL_MS,
        "goals_met": p50 < P50_GOAL_MS and p99 < P99_GOAL_MS,
    }


def _queued(db: Any, number: int) -> tuple[Any, ...] | None:
    return one(db, "bench_intake_order", {"issue": number})


def _ended(db: Any, number: int) -> bool | None:
    row = one(db, "bench_intake_order", {"issue": number})
    return True if row is not None and row[1] else None
