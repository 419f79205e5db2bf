"""peers: the hive's claim + end beside PgQueuer and Procrastinate, no-op jobs, one server.

Each system gets a scratch database of its own on the configured server, in the same
invocation (the workers: hive/bench/peerworkers.py). Needs the `bench` extra
(`pip install 'hive[bench]'`: PgQueuer and Procrastinate, pinned); without it the
benchmark says so and stops.

- throughput: `--jobs` jobs queued, then `--workers` processes (8) take them all, at
  batch 1 and batch `--batch` (10). Batch is each system's own knob: the hive's claims
  per pass (one statement a batch, as a runner with that many free slots claims; the
  batch's endings then go in one statement, as the runner's group commit writes endings
  that come together), PgQueuer's batch_size (one statement a batch), Procrastinate's
  concurrency (one statement a job).
- latency: the workers wait idle (LISTEN and a 5 s poll); `--samples` jobs are queued one
  at a time, `--rate` a second; insert -> pick-up is from just before the insert to the
  job's start in a worker (one machine, one clock), p50 and p99.
- rescue: a worker is killed (SIGKILL) while it runs a job that never ends; the time
  until the job starts again on another worker, each by its own mechanism with the same
  window `--window` seconds: the hive's stall reaper (HIVE_RUNNER_SILENT_MINUTES, real
  `hive serve` processes, hive/bench/recovery.py), PgQueuer's heartbeat_timeout (and
  dequeue_timeout), Procrastinate's stalled worker heartbeat with its documented retry
  of stalled jobs run every window / 4.

Every row has a ratio: the peer's figure over the hive's (throughput: the hive's over
the peer's), so above 1 means the hive is ahead.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import multiprocessing
import queue
import signal
import statistics
import time
from collections.abc import Callable
from typing import Any

from hive.bench import peerworkers as pw
from hive.bench import recovery
from hive.bench.arguments import seconds, whole
from hive.bench.processes import local_hive
from hive.errors import HiveError, UsageError
from hive.rules.branches import branch_name
from hive.settings import Settings
from hive.store import connect, orders, pool, scratch
from hive.store.orders import NewOrder
from hive.store.sql import q

PEERS = ("pgqueuer", "procrastinate")
NOT_INSTALLED = (
    "hive bench peers needs the bench extra (PgQueuer and Procrastinate): "
    "pip install 'hive[bench]' (missing: {missing})"
)
WAIT_SECONDS = 120.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--workers", type=whole(1, 64), default=8, help="worker processes (8)")
    parser.add_argument("--batch", type=whole(2, 100), default=10, help="the large batch (10)")
    parser.add_argument("--jobs", type=whole(1, 1_000_000), default=4000, help="jobs (4000)")
    parser.add_argument("--samples", type=whole(1, 10_000), default=100, help="latency jobs (100)")
    parser.add_argument("--rate", type=whole(1, 1000), default=20, help="latency jobs a s (20)")
    parser.add_argument(
        "--window", type=seconds(1, 600), default=3.0, help="every rescue's window, s (3)"
    )


def missing() -> list[str]:
    """The peers that are not installed."""
    return [name for name in PEERS if importlib.util.find_spec(name) is None]


def run(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    absent = missing()
    if absent:
        raise UsageError(NOT_INSTALLED.format(missing=", ".join(absent)))
    url = connect.database_url(settings)
    connect.check_reachable(url)
    result: dict[str, Any] = {"workers": args.workers, "jobs": args.jobs}
    rows: dict[str, dict[str, float]] = {}
    with scratch.database(url, prefix="hive_bench_peers") as db:
        rows["hive"] = _system(db, args, _HIVE)
    with scratch.database(url, prefix="hive_bench_pgq") as db:
        pw.install_pgqueuer(db)
        rows["pgqueuer"] = _system(db, args, _PGQUEUER)
    with scratch.database(url, prefix="hive_bench_proc") as db:
        pw.install_procrastinate(db)
        rows["procrastinate"] = _system(db, args, _PROCRASTINATE)
    rows["hive"]["rescue_s"], rows["hive"]["rescue_ran_twice"] = _hive_rescue(settings, args.window)
    result["window_s"] = args.window
    for system, row in rows.items():
        for key, value in row.items():
            result[f"{system}_{key}"] = value
    for peer in PEERS:
        for key in ("per_s_batch_1", f"per_s_batch_{args.batch}"):
            result[f"{peer}_{key}_ratio"] = rows["hive"][key] / rows[peer][key]
        for key in ("pickup_p50_ms", "pickup_p99_ms", "rescue_s"):
            result[f"{peer}_{key}_ratio"] = rows[peer][key] / rows["hive"][key]
    return result


class _System:
    """How the bench fills, drains, feeds and rescues one system."""

    def __init__(
        self,
        name: str,
        drain: Callable[..., None],
        serve: Callable[..., None],
        fill: Callable[[str, list[str]], None],
        feeder: Callable[[str], Callable[[str], None]],
    ) -> None:
        self.name = name
        self.drain, self.serve, self.fill, self.feeder = drain, serve, fill, feeder


def _hive_fill(url: str, keys: list[str]) -> None:
    with pool.connect(url) as conn:
        conn.execute(q("bench_clear_orders"))
        conn.execute(q("bench_fill_orders"), {"count": len(keys)})


def _hive_feeder(url: str) -> Callable[[str], None]:
    conn = pool.connect(url)
    conn.execute(q("bench_clear_orders"))

    def feed(key: str) -> None:
        orders.insert(conn, NewOrder(int(key), branch_name(int(key)), "main"), queued=True)

    return feed


def _pgq_feeder(url: str) -> Callable[[str], None]:
    loop = asyncio.new_event_loop()
    pgq = loop.run_until_complete(pw._pgqueuer(url))
    queries = pgq.queries
    assert queries is not None

    def feed(key: str) -> None:
        loop.run_until_complete(queries.enqueue(pw.PGQ_ENTRYPOINT, key.encode(), 0))

    return feed


def _proc_feeder(url: str) -> Callable[[str], None]:
    app = pw._procrastinate(url)
    app.open()
    task = app.tasks[pw.PROC_TASK]

    def feed(key: str) -> None:
        task.defer(key=key)

    return feed


_HIVE = _System("hive", pw.drain_hive, pw.serve_hive, _hive_fill, _hive_feeder)
_PGQUEUER = _System(
    "pgqueuer", pw.drain_pgqueuer, pw.serve_pgqueuer, pw.enqueue_pgqueuer, _pgq_feeder
)
_PROCRASTINATE = _System(
    "procrastinate",
    pw.drain_procrastinate,
    pw.serve_procrastinate,
    pw.enqueue_procrastinate,
    _proc_feeder,
)


def _system(url: str, args: argparse.Namespace, system: _System) -> dict[str, float]:
    row = {}
    for batch in (1, args.batch):
        keys = [str(n) for n in range(1, args.jobs + 1)]
        system.fill(url, keys)
        per_s, done = _throughput(url, args.workers, batch, system)
        if done != args.jobs:
            raise HiveError(
                f"bench peers: {system.name} ran {done} jobs of {args.jobs} at batch {batch}"
            )
        row[f"per_s_batch_{batch}"] = per_s
    row.update(_latency(url, args, system))
    if system is not _HIVE:
        row["rescue_s"], row["rescue_ran_twice"] = _rescue(url, args.window, system)
    return row


def _throughput(url: str, workers: int, batch: int, system: _System) -> tuple[float, int]:
    """Jobs a second over the run, and the jobs run (each exactly once: the count)."""
    ctx = multiprocessing.get_context("spawn")
    barrier, results = ctx.Barrier(workers), ctx.Queue()
    procs = [
        ctx.Process(target=system.drain, args=(url, batch, barrier, results))
        for _ in range(workers)
    ]
    with _running(procs):
        reports = [_get(results, procs, "a worker's report") for _ in procs]
    done = sum(r["done"] for r in reports)
    spent = max(r["ended"] for r in reports) - min(r["began"] for r in reports)
    return float(done / spent), int(done)


def _latency(url: str, args: argparse.Namespace, system: _System) -> dict[str, float]:
    ctx = multiprocessing.get_context("spawn")
    picks = ctx.Queue()
    readies = [ctx.Event() for _ in range(args.workers)]
    procs = [ctx.Process(target=system.serve, args=(url, r, picks)) for r in readies]
    feed = system.feeder(url)
    latencies = []
    with _running(procs):
        for ready in readies:
            if not ready.wait(WAIT_SECONDS):
                raise HiveError("bench peers: a worker did not start")
        gap = 1.0 / args.rate
        for n in range(1, args.samples + 1):
            sent = time.time()
            feed(str(100_000 + n))
            key, picked = _get(picks, procs, f"job {n}'s pick-up")
            if key != str(100_000 + n):
                raise HiveError(f"bench peers: {system.name} started {key} for job {n}")
            latencies.append((picked - sent) * 1000.0)
            time.sleep(max(0.0, sent + gap - time.time()))  # the feeding pace
    latencies.sort()
    return {
        "pickup_p50_ms": statistics.median(latencies),
        "pickup_p99_ms": latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))],
    }


def _rescue(url: str, window: float, system: _System) -> tuple[float, int]:
    """Seconds from a worker's SIGKILL, while it runs a job that never ends, until the
    job starts on the other worker; and how many times the job started again while its
    first worker lived (the other worker up beside it for a whole window): runs twice."""
    ctx = multiprocessing.get_context("spawn")
    picks = ctx.Queue()
    victim_ready, rescuer_ready, stop = ctx.Event(), ctx.Event(), ctx.Event()
    victim = ctx.Process(target=system.serve, args=(url, victim_ready, picks, window))
    rescuer = ctx.Process(target=system.serve, args=(url, rescuer_ready, picks, window))
    helpers = []
    if system is _PROCRASTINATE:
        helpers.append(ctx.Process(target=pw.rescue_procrastinate, args=(url, window, stop)))
    with _running([victim, *helpers]):
        victim_ready.wait(WAIT_SECONDS)
        system.feeder(url)(pw.HOLD)
        _get(picks, [victim], "the held job's start")
        with _running([rescuer]):
            rescuer_ready.wait(WAIT_SECONDS)
            twice = _count(picks, window)  # a window with both alive: no second start due
            killed = time.time()
            victim.kill()
            while True:
                _, again = _get(picks, [rescuer], "the held job's next start", window * 10)
                if again >= killed:
                    break
                twice += 1
        stop.set()
    return again - killed, twice


def _count(picks: Any, seconds: float) -> int:
    """Starts reported over the next `seconds` (a measuring window, not a wait)."""
    count, deadline = 0, time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        try:
            picks.get(timeout=left)
            count += 1
        except queue.Empty:
            break
    return count


def _hive_rescue(settings: Settings, window: float) -> tuple[float, int]:
    """The hive's stall reaper on real processes (hive/bench/recovery.py): SIGKILL to the
    next attempt's claim by the other runner, and turns started beyond one an attempt."""
    silent_minutes = f"{window / 60:.6f}"
    with local_hive(settings) as hive:
        hive.queen(HIVE_RUNNER_SILENT_MINUTES=silent_minutes)
        one = recovery._one(hive, 0, silent_minutes, window)
    return float(one["reclaimed_s"]), int(one["duplicates"])


class _running:
    """Start the processes; on the way out kill whichever still runs."""

    def __init__(self, procs: list[Any]) -> None:
        self.procs = procs

    def __enter__(self) -> None:
        for p in self.procs:
            p.start()

    def __exit__(self, *exc: object) -> None:
        for p in self.procs:
            if p.exitcode is None:
                p.kill()
            p.join(WAIT_SECONDS)


def _get(results: Any, procs: list[Any], what: str, timeout: float = WAIT_SECONDS) -> Any:
    """The next item of `results`; a HiveError when a process died or the timeout passed."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            return results.get(timeout=0.5)
        except queue.Empty:
            dead = [p.pid for p in procs if p.exitcode not in (None, 0, -signal.SIGKILL)]
            if dead:
                raise HiveError(f"bench peers: worker {dead} died waiting for {what}") from None
    raise HiveError(f"bench peers: waited {timeout:g} s for {what}; none came")
