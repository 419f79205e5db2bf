"""claim: N runner processes claim and end M orders; the same workload as a bare SQL loop.

Both runs use a scratch database on the configured server. The hive's run goes through
`hive.store.orders.claim`/`end` on a `HeldConnection`, one per process (what a runner's
claimer uses: it checks itself and reconnects); the bare run sends the same two
statements on one plain psycopg connection per process. Double claims are counted
across every process (must be 0).
"""

from __future__ import annotations

import argparse
import multiprocessing
import queue
import statistics
import time
import uuid
from collections import Counter
from typing import Any

import psycopg

from hive.bench.arguments import whole
from hive.errors import HiveError, UsageError
from hive.rules.states import Outcome
from hive.settings import Settings
from hive.store import connect, endings, orders, pool, scratch
from hive.store.sql import q

# how long the parent waits for one process's report before calling the run hung
REPORT_TIMEOUT_SECONDS = 300
# how often the parent looks whether a runner died while it waits for reports
REPORT_POLL_SECONDS = 0.5
MAX_RUNNERS = 256


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--runners", type=whole(1, 1_000_000), default=8, help="runner processes (8)"
    )
    parser.add_argument(
        "--orders", type=whole(1, 1_000_000), default=2000, help="orders to drain (2000)"
    )


def run(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    if args.runners > MAX_RUNNERS:
        raise UsageError(f"--runners {args.runners} is too many (at most {MAX_RUNNERS})")
    url = connect.database_url(settings)
    connect.check_reachable(url)
    with scratch.database(url) as db_url:
        hive = _drain(db_url, args.runners, args.orders, _hive_runner)
        bare = _drain(db_url, args.runners, args.orders, _bare_runner)
    return {
        "runners": args.runners,
        "orders": args.orders,
        "claims_per_s": hive["per_s"],
        "p50_ms": hive["p50_ms"],
        "p99_ms": hive["p99_ms"],
        "double_claims": hive["double"],
        "bare_claims_per_s": bare["per_s"],
        "bare_p50_ms": bare["p50_ms"],
        "bare_p99_ms": bare["p99_ms"],
        "bare_double_claims": bare["double"],
        "ratio": hive["per_s"] / bare["per_s"],
    }


def _drain(url: str, runners: int, count: int, target: Any) -> dict[str, Any]:
    with pool.connect(url) as conn:
        conn.execute(q("bench_clear_orders"))
        conn.execute(q("bench_fill_orders"), {"count": count})
    ctx = multiprocessing.get_context("spawn")
    barrier, results = ctx.Barrier(runners), ctx.Queue()
    procs = [
        ctx.Process(target=target, args=(url, f"bench-{i}", barrier, results))
        for i in range(runners)
    ]
    try:
        for p in procs:
            p.start()
        reports = _reports(procs, results)
        for p in procs:
            p.join(REPORT_TIMEOUT_SECONDS)
    finally:
        for p in procs:  # a failed run leaves no runner behind, waiting at the barrier
            if p.pid is not None and p.exitcode is None:
                p.kill()
                p.join(REPORT_TIMEOUT_SECONDS)
    claimed = Counter(issue for r in reports for issue in r["issues"])
    latencies = sorted(ms for r in reports for ms in r["latencies_ms"])
    seconds = max(r["ended"] for r in reports) - min(r["began"] for r in reports)
    return {
        "per_s": claimed.total() / seconds,
        "p50_ms": statistics.median(latencies),
        "p99_ms": latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))],
        "double": sum(n - 1 for n in claimed.values() if n > 1),
    }


def _reports(procs: list[Any], results: Any) -> list[dict[str, Any]]:
    """One report per process; a process that died without one fails the run at once
    (its siblings would wait at the barrier, and this at the queue, until the timeout)."""
    reports: list[dict[str, Any]] = []
    deadline = time.monotonic() + REPORT_TIMEOUT_SECONDS
    while len(reports) < len(procs):
        try:
            reports.append(results.get(timeout=REPORT_POLL_SECONDS))
            continue
        except queue.Empty:
            pass
        dead = [p.name for p in procs if p.exitcode not in (None, 0)]
        if dead:
            raise HiveError(f"bench claim: {', '.join(dead)} died without a report")
        if time.monotonic() > deadline:
            raise HiveError(f"bench claim: no report in {REPORT_TIMEOUT_SECONDS} s")
    return reports


def _hive_runner(url: str, name: str, barrier: Any, results: Any) -> None:
    issues, latencies = [], []
    with pool.HeldConnection(url) as db:
        orders.listing(db)  # connected and warm before the clock starts
        barrier.wait()
        began = time.monotonic()
        while True:
            t0 = time.perf_counter()
            got = orders.claim(db, name)
            latencies.append((time.perf_counter() - t0) * 1000.0)
            if got is None:
                break
            endings.end(db, endings.OrderEnding(got.fence, Outcome.FINISHED))
            issues.append(got.issue)
        ended = time.monotonic()
    results.put({"issues": issues, "latencies_ms": latencies, "began": began, "ended": ended})


def _bare_runner(url: str, name: str, barrier: Any, results: Any) -> None:
    """The ceiling: the same two statements on one plain connection, nothing else."""
    claim_sql, end_sql = q("claim_order"), q("end_order")
    # the ending's parameters, made once: the loop only puts each row's issue and attempt in
    ending = endings.end_params(
        endings.OrderEnding(orders.Fence(0, uuid.UUID(int=0), name), Outcome.FINISHED)
    )
    issues, latencies = [], []
    with psycopg.connect(url, autocommit=True) as conn:
        barrier.wait()
        began = time.monotonic()
        while True:
            t0 = time.perf_counter()
            row = conn.execute(claim_sql, {"runner": name}).fetchone()
            latencies.append((time.perf_counter() - t0) * 1000.0)
            if row is None:
                break
            ending_of_row = ending | {"issue": row[0], "conversation_id": row[1]}
            conn.execute(end_sql, ending_of_row).fetchone()
            issues.append(row[0])
        ended = time.monotonic()
    results.put({"issues": issues, "latencies_ms": latencies, "began": began, "ended": ended})
