"""scale with many runners: `hive bench scale --runners N --pgbouncer` (DESIGN 11).

This machine cannot hold a thousand runner processes, so a runner here is a claim loop,
and `--per-process` of them (64) share a process, as a host's runners would: each loop
has a work connection of its own (through PgBouncer in transaction mode with
`--pgbouncer`, no statement prepared; else straight to the server), and the process
keeps one LISTEN connection to the server itself (`HIVE_LISTEN_URL`'s part), shared by
its loops; a `hive_orders` hint wakes one hungry loop of the process, not all of them
(`Listener(..., one_of=True)`). Each loop claims (`claim_orders`, one slot), ends the
order at once (`end_order`), and otherwise waits for its hint or its poll
(`--poll` seconds with a tenth of jitter). `--herd` wakes every loop of the process on
each hint instead, as the shared LISTEN did before: the side-by-side.

`--orders` orders are queued `--rate` a second. Figures: claim latency from the rows
(`claimed_at - queued_at`, the server's clock); the most server connections (client
backends in pg_stat_activity, every SAMPLE_GAP_SECONDS while the orders run); the
server's CPU per order (the postmaster's tree, from /proc: this run's own server);
PgBouncer's CPU per order beside it; double claims (an order two loops both ended).
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import random
import statistics
import tempfile
import threading
import time
from collections import Counter
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from hive.bench import procstat
from hive.errors import HiveError
from hive.rules.branches import branch_name
from hive.rules.states import Outcome
from hive.store import endings, orders, pgbouncer, pool
from hive.store.db import dicts, one
from hive.store.listen import Listener, is_ending
from hive.store.orders import NewOrder

CLAIM_P99_GOAL_MS = 100.0
SERVER_CONNECTIONS_GOAL = 150
PG_CPU_GOAL_MS = 25.0
START_SECONDS = 120.0
END_SECONDS = 120.0
SAMPLE_GAP_SECONDS = 0.1
POOL_SIZE = 40  # PgBouncer's server connections for the bench's database
JITTER = 0.1


def measure(args: argparse.Namespace, url: str, postmaster: int) -> dict[str, Any]:
    """The run on the bench's own server at `url` (migrated, empty)."""
    n, per = args.runners, args.per_process
    processes = math.ceil(n / per)
    with ExitStack() as stack:
        work_url, bouncer_pid = url, None
        if args.pgbouncer:
            where = Path(tempfile.mkdtemp(prefix="hive-pgb-", dir="/tmp"))
            where.chmod(0o711)  # as root PgBouncer runs as another user
            bouncer = pgbouncer.start(url, where / "b", pool_size=POOL_SIZE, max_clients=n + 100)
            stack.callback(bouncer.stop)
            work_url, bouncer_pid = bouncer.url(url), bouncer.process.pid
        ctx = multiprocessing.get_context("spawn")
        stop, results = ctx.Event(), ctx.Queue()
        ready = [ctx.Event() for _ in range(processes)]
        procs = []
        for p in range(processes):
            loops = min(per, n - p * per)
            proc = ctx.Process(
                target=_host,
                args=(url, work_url, args.pgbouncer, p, loops, args.poll, ready[p], stop, results),
                kwargs={"herd": args.herd},
            )
            proc.start()
            procs.append(proc)
        stack.callback(_stop_all, procs, stop)
        for event in ready:
            if not event.wait(START_SECONDS):
                raise HiveError("bench scale: a runner process did not start its loops")
        with pool.connect(url) as db:
            idle_connections = _connections(db)
            sampler = _Sampler(url)
            stack.callback(sampler.stop)
            t0 = time.monotonic()
            cpu0 = procstat.tree_cpu_seconds(postmaster)
            b0 = procstat.tree_cpu_seconds(bouncer_pid) if bouncer_pid else 0.0
            gap = 1.0 / args.rate
            for k in range(args.orders):
                orders.insert(db, NewOrder(k + 1, branch_name(k + 1), "main"), queued=True)
                pause = t0 + (k + 1) * gap - time.monotonic()
                if pause > 0:
                    time.sleep(pause)  # the queueing pace, not a wait for an event
            deadline = time.monotonic() + END_SECONDS
            while _ended(db) < args.orders:
                if time.monotonic() > deadline:
                    raise HiveError(f"bench scale: {_ended(db)} of {args.orders} orders ended")
                time.sleep(0.05)
            seconds = time.monotonic() - t0
            cpu = procstat.tree_cpu_seconds(postmaster) - cpu0
            bouncer_cpu = (procstat.tree_cpu_seconds(bouncer_pid) - b0) if bouncer_pid else 0.0
            most = sampler.stop()
            latencies = sorted(float(r["claim_ms"]) for r in dicts(db, "bench_claim_latencies"))
        stop.set()
        ended: Counter[int] = Counter()
        for _ in procs:
            ended.update(results.get(timeout=START_SECONDS))
    p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))]
    pg_ms = cpu * 1000.0 / args.orders
    return {
        "runners": n,
        "processes": processes,
        "runners_per_process": per,
        "pgbouncer": bool(args.pgbouncer),
        "herd": bool(args.herd),
        "max_connections": args.max_connections,
        "orders": args.orders,
        "rate_per_s": args.rate,
        "poll_s": args.poll,
        "claim_p50_ms": statistics.median(latencies),
        "claim_p99_ms": p99,
        "server_connections_idle": idle_connections,
        "server_connections_max": most,
        "pg_cpu_ms_per_order": pg_ms,
        "pgbouncer_cpu_ms_per_order": bouncer_cpu * 1000.0 / args.orders,
        "seconds": seconds,
        "double_claims": sum(count - 1 for count in ended.values() if count > 1),
        "ended_by_loops": sum(ended.values()),
        "goals_met": p99 < CLAIM_P99_GOAL_MS
        and most < SERVER_CONNECTIONS_GOAL
        and pg_ms < PG_CPU_GOAL_MS
        and not any(count > 1 for count in ended.values()),
    }


def _stop_all(procs: list[Any], stop: Any) -> None:
    stop.set()
    for proc in procs:
        proc.join(5)
        if proc.is_alive():
            proc.kill()
            proc.join(5)


def _connections(db: Any) -> int:
    row = one(db, "bench_client_backends")
    return int(row[0]) if row else 0


def _ended(db: Any) -> int:
    row = one(db, "bench_ended_orders")
    return int(row[0]) if row else 0


class _Sampler:
    """The most client backends seen, every SAMPLE_GAP_SECONDS, until `stop()`."""

    def __init__(self, url: str) -> None:
        self.most = 0
        self._stopping = threading.Event()
        self._conn = pool.connect(url)
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stopping.wait(SAMPLE_GAP_SECONDS):
            self.most = max(self.most, _connections(self._conn))

    def stop(self) -> int:
        if not self._stopping.is_set():
            self._stopping.set()
            self._thread.join(5)
            self._conn.close()
        return self.most


# ---- a host's runners (a spawned process) ----------------------------------------------


def _host(
    listen_url: str,
    work_url: str,
    pooled: bool,
    index: int,
    loops: int,
    poll: float,
    ready: Any,
    stop: Any,
    results: Any,
    *,
    herd: bool = False,
) -> None:
    ended: list[int] = []
    listeners: list[Listener] = []
    lock = threading.Lock()
    started = threading.Barrier(loops + 1)
    threads = [
        threading.Thread(
            target=_loop,
            args=(listen_url, work_url, pooled, f"scale-{index}-{i}", poll, stop, started),
            kwargs={"ended": ended, "listeners": listeners, "lock": lock, "herd": herd},
            daemon=True,
        )
        for i in range(loops)
    ]
    for thread in threads:
        thread.start()
    started.wait(START_SECONDS)
    ready.set()
    stop.wait()
    with lock:
        for listener in listeners:
            listener.wake()
    for thread in threads:
        thread.join(poll * 2 + 5)
    results.put(ended)


def _loop(
    listen_url: str,
    work_url: str,
    pooled: bool,
    name: str,
    poll: float,
    stop: Any,
    started: threading.Barrier,
    *,
    ended: list[int],
    listeners: list[Listener],
    lock: threading.Lock,
    herd: bool,
) -> None:
    hungry = threading.Event()
    hungry.set()
    with (
        pool.HeldConnection(work_url, prepare=not pooled) as db,
        Listener(listen_url, is_ending, one_of=not herd, hungry=hungry.is_set) as listener,
    ):
        db.get()
        with lock:
            listeners.append(listener)
        started.wait(START_SECONDS)
        while not stop.is_set():
            claimed = orders.claim_many(db, name, 1)
            for got in claimed:
                hungry.clear()  # a slot of one: busy while it ends the order
                if endings.end(db, endings.OrderEnding(got.fence, Outcome.FINISHED)):
                    with lock:
                        ended.append(got.issue)
                hungry.set()
            if not claimed:
                listener.wait(poll * random.uniform(1 - JITTER, 1 + JITTER))
