"""scale: N runner processes (one slot each) on one PostgreSQL: connections held, claim
latency with N listeners, the server's CPU per order, the hive's memory per runner and
per bee. With `--pgbouncer` (or `--per-process`) up to 1,000 runners, each a claim loop,
several a process, their work through PgBouncer: hive/bench/scalepool.py.

The benchmark starts its own embedded PostgreSQL under /tmp with `max_connections` set
(`--max-connections`, 200), so the server's CPU it counts (from /proc: the postmaster,
its backends, and the backends it already reaped) is this run's alone. Real `hive serve`
runners (HIVE_RUNNER_SLOTS=1, the default poll) run a `command:` agent steered by a file.

1. idle: the N runners register and LISTEN; the connections each holds (the most over
   SAMPLES looks at pg_stat_activity), the server's CPU per second, each runner's RSS
   and PSS.
2. busy: one held order per runner; once every turn runs, the connections again, and
   each runner's memory: a bee's own is its runner's PSS with the bee less without (the
   agent's process is the user's, not the hive's).
3. claims: `--orders` orders queued one at a time, `--rate` a second, each a turn that
   ends at once; claim latency is claimed_at - queued_at (both the server's clock; a
   turn this short never renews claimed_at)
   while each NOTIFY wakes all N runners; the server's CPU per order, whole and less the
   idle CPU of the same seconds; the runners' own CPU per order (their agents' included).
4. the ceiling: the runners stopped, N bare processes (a LISTEN connection and a claim
   connection each, the claim and end statements and nothing else) take the same orders
   at the same rate: what this machine and server give N listeners, side by side.
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import shutil
import statistics
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg

from hive import demo_data
from hive.bench import procstat, scalepool
from hive.bench.arguments import whole
from hive.bench.processes import LocalHive
from hive.errors import HiveError
from hive.rules.branches import branch_name
from hive.rules.connections import BUSY_CONNECTIONS, IDLE_CONNECTIONS
from hive.rules.states import Outcome
from hive.settings import Settings
from hive.store import embedded, endings, migrate, orders, runners
from hive.store.orders import NewOrder
from hive.store.sql import q
from hive.swarm import Serve, kill_everything_under

CLAIM_P99_GOAL_MS = 50.0  # issue 15: claim p99 under 50 ms with 64 listeners
SAMPLES = 20  # looks at pg_stat_activity per phase
SAMPLE_GAP_SECONDS = 0.1
IDLE_CPU_SECONDS = 15.0  # the idle phase's CPU window: one poll of every runner
FILES = 64
START_SECONDS_PER_RUNNER = 4.0  # `hive serve` to registered, on a loaded 2-core machine
START_SECONDS = 60.0
END_SECONDS = 120.0
AGENT_SCRIPT = r"""#!/bin/sh
# the scale bench's bee: records its turn, waits while <ctl>/hold exists, changes nothing
echo $$ >> "$1/$HIVE_ISSUE.turns"
while [ -e "$1/hold" ]; do sleep 0.05; done
"""
APP_PREFIX = "hive-scale-"
MAX_PROCESSES = 64  # `hive serve` runner processes this machine holds
PER_PROCESS = 64  # claim loops a process with --pgbouncer


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--runners",
        type=whole(1, 1000),
        default=64,
        help="runners (64; above 64 with --pgbouncer or --per-process)",
    )
    parser.add_argument(
        "--pgbouncer",
        action="store_true",
        help="the runners' work through PgBouncer in transaction mode (claim loops, several"
        " a process: hive/bench/scalepool.py)",
    )
    parser.add_argument(
        "--per-process",
        type=whole(1, 1000),
        default=None,
        help="claim loops a process (64 with --pgbouncer): many runners, each a claim loop",
    )
    parser.add_argument(
        "--poll", type=whole(1, 3600), default=15, help="a claim loop's poll, s (15)"
    )
    parser.add_argument(
        "--herd",
        action="store_true",
        help="each hint wakes every claim loop of a process (as before one_of), to compare",
    )
    parser.add_argument(
        "--orders", type=whole(1, 100_000), default=256, help="orders of the claim phase (256)"
    )
    # well below what the runners can end, so the latency is the claim's, not a queue's
    parser.add_argument("--rate", type=whole(1, 1000), default=4, help="orders queued a s (4)")
    parser.add_argument(
        "--max-connections",
        type=whole(20, 10_000),
        default=200,
        help="the bench server's max_connections (200)",
    )
    parser.add_argument("--keep", action="store_true", help="keep the directory and its logs")


def run(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    if args.pgbouncer or args.per_process is not None:
        args.per_process = args.per_process or PER_PROCESS
        direct = 0 if args.pgbouncer else args.runners
        if direct + math.ceil(args.runners / args.per_process) + 10 > args.max_connections:
            raise HiveError(
                f"--runners {args.runners} straight to the server need more than"
                f" --max-connections {args.max_connections}: add --pgbouncer"
            )
        with bench_server(args.max_connections, keep=args.keep) as (_, url, postmaster):
            return scalepool.measure(args, url, postmaster)
    if args.runners > MAX_PROCESSES:
        raise HiveError(
            f"--runners {args.runners}: at most {MAX_PROCESSES} runner processes here;"
            " more with --pgbouncer or --per-process (claim loops, several a process)"
        )
    if args.runners * BUSY_CONNECTIONS + 3 > args.max_connections:
        raise HiveError(
            f"--runners {args.runners} may hold {args.runners * BUSY_CONNECTIONS} connections"
            f" with bees, beyond --max-connections {args.max_connections}: raise"
            " --max-connections or lower --runners"
        )
    with bench_server(args.max_connections, keep=args.keep) as (root, url, postmaster):
        hive = LocalHive(root, url, settings)
        try:
            return _measure(hive, args, postmaster)
        finally:
            hive.shutdown()


@contextmanager
def bench_server(max_connections: int, *, keep: bool) -> Iterator[tuple[Path, str, int]]:
    """A directory under /tmp with the sample repository and the agent, and an embedded
    PostgreSQL of its own allowing `max_connections`, migrated: (root, url, postmaster
    pid). Stopped and removed afterwards (the directory kept with `keep`)."""
    root = Path(tempfile.mkdtemp(prefix="hive-bench-scale-", dir="/tmp"))
    # beside the root, not in it: the end of the run kills every process under the root
    pg_root = Path(tempfile.mkdtemp(prefix="hive-bench-scale-pg-", dir="/tmp"))
    pgdata = pg_root / "pg"
    try:
        (root / "ctl").mkdir()
        (root / "agent.sh").write_text(AGENT_SCRIPT)
        files = {f"files/f{n}.txt": f"file {n}\n" for n in range(1, FILES + 1)}
        demo_data.make_repository(root / "repo", files)
        url = embedded.start(pgdata)
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f"ALTER SYSTEM SET max_connections = {int(max_connections)}")
        embedded.stop(pgdata)
        url = embedded.start(pgdata)
        migrate.apply(url)
        pid = embedded.status(pgdata).pid
        if pid is None:
            raise HiveError(f"bench scale: the embedded PostgreSQL in {pgdata} did not start")
        yield root, url, pid
    finally:
        try:
            embedded.stop(pgdata)
        finally:
            shutil.rmtree(pg_root, ignore_errors=True)
            if not keep:
                shutil.rmtree(root, ignore_errors=True)


def _measure(hive: LocalHive, args: argparse.Namespace, postmaster: int) -> dict[str, Any]:
    n = args.runners
    names = [f"scale-{i}" for i in range(n)]
    # the bench's defaults: each runner polls every HIVE_RUNNER_SECONDS as in production
    for name in names:
        hive.start(name, "runner", HIVE_RUNNER_SLOTS="1", HIVE_RUNNER_SECONDS="15")
    start_seconds = START_SECONDS + START_SECONDS_PER_RUNNER * n
    hive.wait(lambda: len(runners.listing(hive.db)) == n or None, start_seconds, "runners up")
    hive.wait(lambda: _listening(hive.db) == n or None, start_seconds, "every runner LISTENs")

    idle_held = _held(hive.db)
    t0, cpu0 = time.monotonic(), procstat.tree_cpu_seconds(postmaster)
    time.sleep(IDLE_CPU_SECONDS)  # a measuring window: the idle server's CPU over it
    idle_cpu_per_s = (procstat.tree_cpu_seconds(postmaster) - cpu0) / (time.monotonic() - t0)
    idle_memory = _memory(hive)

    (hive.ctl / "hold").touch()
    for issue in range(1, n + 1):
        orders.insert(hive.db, _order(issue), queued=True)
    hive.wait(
        lambda: all(hive.turns(i) for i in range(1, n + 1)) or None,
        start_seconds,
        "a bee in every runner",
        poll=0.1,
    )
    busy_held = _held(hive.db)
    busy_memory = _memory(hive)
    (hive.ctl / "hold").unlink()
    hive.wait(lambda: _ended(hive.db) == n or None, END_SECONDS, "the held orders end", 0.1)

    claims = _claims(hive, postmaster, n + 1, args.orders, args.rate)
    kill_everything_under(hive.root, hive.serves)
    bare = _bare_claims(hive, postmaster, n, n + 1 + args.orders, args)
    per_bee = [busy_memory[k].pss_bytes - idle_memory[k].pss_bytes for k in idle_memory]
    per_bee_rss = [busy_memory[k].rss_bytes - idle_memory[k].rss_bytes for k in idle_memory]
    p99 = claims["p99_ms"]
    return {
        "runners": n,
        "max_connections": args.max_connections,
        "connections_idle": sum(idle_held.values()),
        "connections_busy": sum(busy_held.values()),
        "per_runner_idle_max": max(idle_held.values()),
        "per_runner_busy_max": max(busy_held.values()),
        "budget_idle": IDLE_CONNECTIONS,
        "budget_busy": BUSY_CONNECTIONS,
        "within_budget": max(idle_held.values()) <= IDLE_CONNECTIONS
        and max(busy_held.values()) <= BUSY_CONNECTIONS,
        "connections_busy_ratio": sum(busy_held.values()) / args.max_connections,
        "orders": args.orders,
        "rate_per_s": args.rate,
        "claim_p50_ms": claims["p50_ms"],
        "claim_p99_ms": p99,
        "claim_p99_goal_ms": CLAIM_P99_GOAL_MS,
        "claim_p99_ratio": p99 / CLAIM_P99_GOAL_MS,
        "bare_claim_p50_ms": bare["p50_ms"],
        "bare_claim_p99_ms": bare["p99_ms"],
        "claim_p99_ratio_to_bare": p99 / bare["p99_ms"],
        "bare_pg_cpu_ms_per_order": bare["cpu_s"] * 1000.0 / args.orders,
        "pg_cpu_idle_ms_per_s": idle_cpu_per_s * 1000.0,
        "pg_cpu_ms_per_order": claims["cpu_s"] * 1000.0 / args.orders,
        "pg_cpu_ms_per_order_less_idle": max(
            0.0, (claims["cpu_s"] - idle_cpu_per_s * claims["seconds"]) * 1000.0 / args.orders
        ),
        "hive_cpu_ms_per_order": claims["hive_cpu_s"] * 1000.0 / args.orders,
        "runner_rss_mb": _mb(statistics.median(m.rss_bytes for m in idle_memory.values())),
        "runner_pss_mb": _mb(statistics.median(m.pss_bytes for m in idle_memory.values())),
        "bee_rss_mb": _mb(statistics.median(per_bee_rss)),
        "bee_pss_mb": _mb(statistics.median(per_bee)),
    }


def _claims(
    hive: LocalHive,
    postmaster: int,
    first: int,
    count: int,
    rate: int,
    serves: list[Serve] | None = None,
) -> dict[str, float]:
    """Queue `count` orders from issue `first` on, `rate` a second, and wait for them to
    end: claim latencies, the server's and the runners' CPU over the phase (a runner's
    includes its agents') and its seconds."""
    gap = 1.0 / rate
    t0, cpu0 = time.monotonic(), procstat.tree_cpu_seconds(postmaster)
    serves = hive.serves if serves is None else serves
    hive0 = sum(procstat.tree_cpu_seconds(s.pid) for s in serves)
    for k in range(count):
        orders.insert(hive.db, _order(first + k), queued=True)
        pause = t0 + (k + 1) * gap - time.monotonic()
        if pause > 0:
            time.sleep(pause)  # the queueing pace, not a wait for an event
    total = first - 1 + count
    hive.wait(lambda: _ended(hive.db) == total or None, END_SECONDS + count / rate, "orders end")
    seconds = time.monotonic() - t0
    cpu = procstat.tree_cpu_seconds(postmaster) - cpu0
    hive_cpu = sum(procstat.tree_cpu_seconds(s.pid) for s in serves) - hive0
    rows = hive.db.execute(
        "SELECT extract(epoch FROM claimed_at - queued_at) * 1000 FROM hive.queen_dispatch"
        " WHERE issue >= %s ORDER BY 1",
        (first,),
    ).fetchall()
    latencies = [float(r[0]) for r in rows]
    return {
        "p50_ms": statistics.median(latencies),
        "p99_ms": latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))],
        "cpu_s": cpu,
        "hive_cpu_s": hive_cpu,
        "seconds": seconds,
    }


def _bare_claims(
    hive: LocalHive, postmaster: int, listeners: int, first: int, args: argparse.Namespace
) -> dict[str, float]:
    """`_claims` taken by `listeners` bare processes instead of the runners."""
    ctx = multiprocessing.get_context("spawn")
    stop = ctx.Event()
    readies = [ctx.Event() for _ in range(listeners)]
    procs = [
        ctx.Process(target=_bare_listener, args=(hive.url, f"bare-{i}", ready, stop))
        for i, ready in enumerate(readies)
    ]
    for proc in procs:
        proc.start()
    try:
        for ready in readies:
            if not ready.wait(START_SECONDS):
                raise HiveError("bench scale: a bare listener did not start")
        return _claims(hive, postmaster, first, args.orders, args.rate, serves=[])
    finally:
        stop.set()
        for proc in procs:
            proc.kill()
            proc.join(START_SECONDS)


def _bare_listener(url: str, name: str, ready: Any, stop: Any) -> None:
    """LISTEN on one connection; on each notification claim and end on the other
    until nothing is left."""
    claim_sql, end_sql = q("claim_order"), q("end_order")
    ending = endings.end_params(
        endings.OrderEnding(orders.Fence(0, uuid.UUID(int=0), name), Outcome.FINISHED)
    )
    with (
        psycopg.connect(url, autocommit=True) as conn,
        psycopg.connect(url, autocommit=True) as heard,
    ):
        heard.execute(q("listen_orders"))
        ready.set()
        while not stop.is_set():
            for _ in heard.notifies(timeout=1.0, stop_after=1):
                pass
            while (row := conn.execute(claim_sql, {"runner": name}).fetchone()) is not None:
                conn.execute(end_sql, ending | {"issue": row[0], "conversation_id": row[1]})


def _order(issue: int) -> NewOrder:
    path = f"files/f{(issue - 1) % FILES + 1}.txt"
    return NewOrder(issue, branch_name(issue), demo_data.BASE, owned_paths=(path,))


def _held(db: psycopg.Connection[Any]) -> dict[str, int]:
    """Connections per runner, the most of SAMPLES looks."""
    most: dict[str, int] = {}
    for _ in range(SAMPLES):
        rows = db.execute(
            "SELECT application_name, count(*) FROM pg_stat_activity"
            " WHERE starts_with(application_name, %s) GROUP BY 1",
            (APP_PREFIX,),
        ).fetchall()
        for name, count in rows:
            most[name] = max(most.get(name, 0), int(count))
        time.sleep(SAMPLE_GAP_SECONDS)  # spread the looks over the runners' polls
    return most


def _listening(db: psycopg.Connection[Any]) -> int:
    row = db.execute(
        "SELECT count(*) FROM pg_stat_activity"
        " WHERE starts_with(application_name, %s) AND query ILIKE '%%LISTEN %%'",
        (APP_PREFIX,),
    ).fetchone()
    return int(row[0]) if row else 0


def _ended(db: psycopg.Connection[Any]) -> int:
    row = db.execute(
        "SELECT count(*) FROM hive.queen_dispatch WHERE finished_at IS NOT NULL"
    ).fetchone()
    return int(row[0]) if row else 0


def _memory(hive: LocalHive) -> dict[str, procstat.Memory]:
    found = {}
    for serve in hive.serves:
        measured = procstat.memory(serve.pid)
        if measured is None:
            raise HiveError(f"bench scale: {serve.name} is gone (log {serve.log_path})")
        found[serve.name] = measured
    return found


def _mb(value: float) -> float:
    return value / (1024 * 1024)
