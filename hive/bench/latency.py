"""latency: time from the Queen's insert to a runner's claim, woken by NOTIFY and by polling.

One runner process waits for work the way a runner does (`hive.store.listen.Listener`
with a long poll, or polling only every `--poll-ms`); the Queen side inserts one queued
order at a time and the runner reports when its claim returned. The bare run does the
same with a plain psycopg LISTEN connection and the same claim statement (the ceiling).
"""

from __future__ import annotations

import argparse
import multiprocessing
import random
import statistics
import time
from typing import Any

import psycopg

from hive.bench.arguments import whole
from hive.rules.branches import branch_name
from hive.rules.states import Outcome
from hive.settings import Settings
from hive.store import connect, endings, orders, pool, scratch
from hive.store.listen import Listener
from hive.store.orders import NewOrder
from hive.store.sql import q

# with NOTIFY the runner's poll is this long, so only the NOTIFY wakes it within a sample
NOTIFY_MODE_POLL_SECONDS = 30.0
REPORT_TIMEOUT_SECONDS = 60.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--samples", type=whole(1, 100_000), default=50, help="orders per mode (50)"
    )
    parser.add_argument(
        "--poll-ms",
        type=whole(1, 100_000),
        default=200,
        help="the polling-only runner's period (200)",
    )


def run(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    url = connect.database_url(settings)
    connect.check_reachable(url)
    poll_seconds = args.poll_ms / 1000.0
    with scratch.database(url) as db_url:
        notify = _measure(db_url, args.samples, "notify", 0.0)
        polled = _measure(db_url, args.samples, "poll", poll_seconds)
        bare = _measure(db_url, args.samples, "bare", 0.0)
    return {
        "samples": args.samples,
        "notify_p50_ms": notify[0],
        "notify_p99_ms": notify[1],
        "poll_ms": args.poll_ms,
        "poll_p50_ms": polled[0],
        "poll_p99_ms": polled[1],
        "bare_notify_p50_ms": bare[0],
        "bare_notify_p99_ms": bare[1],
        "ratio_p50": bare[0] / notify[0],
    }


def _measure(url: str, samples: int, mode: str, poll_seconds: float) -> tuple[float, float]:
    """(p50, p99) in ms of insert-to-claim over `samples` orders."""
    with pool.connect(url) as conn:
        conn.execute(q("bench_clear_orders"))
    ctx = multiprocessing.get_context("spawn")
    ready, stop, claims = ctx.Event(), ctx.Event(), ctx.Queue()
    runner = ctx.Process(target=_runner, args=(url, mode, poll_seconds, ready, stop, claims))
    runner.start()
    ready.wait(REPORT_TIMEOUT_SECONDS)
    latencies = []
    with pool.connect(url) as conn:
        for issue in range(1, samples + 1):
            # land at a random point of the runner's poll period, not just after a claim
            time.sleep(random.uniform(0.0, poll_seconds or 0.005))
            inserted = time.monotonic()
            orders.insert(conn, NewOrder(issue, branch_name(issue), "main"), queued=True)
            claimed_issue, claimed = claims.get(timeout=REPORT_TIMEOUT_SECONDS)
            assert claimed_issue == issue
            latencies.append((claimed - inserted) * 1000.0)
        stop.set()
        orders.insert(conn, NewOrder(samples + 1, "wake", "main"), queued=True)  # wakes it
    runner.join(REPORT_TIMEOUT_SECONDS)
    latencies.sort()
    return statistics.median(latencies), latencies[
        min(len(latencies) - 1, int(len(latencies) * 0.99))
    ]


def _runner(url: str, mode: str, poll_seconds: float, ready: Any, stop: Any, claims: Any) -> None:
    if mode == "bare":
        _bare_runner(url, ready, stop, claims)
        return
    listener = Listener(url) if mode == "notify" else None
    with pool.HeldConnection(url) as db:
        ready.set()
        while not stop.is_set():
            got = orders.claim(db, "bench")
            if got is not None:
                claims.put((got.issue, time.monotonic()))
                endings.end(db, endings.OrderEnding(got.fence, Outcome.FINISHED))
            elif listener is not None:
                listener.wait(NOTIFY_MODE_POLL_SECONDS)
            else:
                stop.wait(poll_seconds)
    if listener is not None:
        listener.close()


def _bare_runner(url: str, ready: Any, stop: Any, claims: Any) -> None:
    claim_sql = q("claim_order")
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(q("listen_orders"))
        ready.set()
        while not stop.is_set():
            row = conn.execute(claim_sql, {"runner": "bench"}).fetchone()
            if row is not None:
                claims.put((row[0], time.monotonic()))
            else:
                for _ in conn.notifies(timeout=NOTIFY_MODE_POLL_SECONDS, stop_after=1):
                    pass
