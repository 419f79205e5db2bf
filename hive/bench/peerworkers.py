"""The workers of `hive bench peers`, one function per system and mode, each run in a
process of its own (multiprocessing, spawn): the hive's claim + end, PgQueuer and
Procrastinate, every job a no-op.

- `drain_*(url, batch, barrier, results)`: wait at the barrier, take jobs until none
  is left, report {"done", "began", "ended"} (time.monotonic()).
- `serve_*(url, ready, picks)`: take jobs as they come until killed; each job puts
  (key, time.time()) in `picks` when it starts. The key "hold" job never ends (the
  rescue: its worker is killed while it runs).

PgQueuer and Procrastinate are imported inside the functions: they are the optional
`bench` extra.
"""

from __future__ import annotations

import asyncio
import time
from datetime import timedelta
from typing import TYPE_CHECKING, Any

import psycopg

from hive.rules.states import Outcome
from hive.store import endings, orders, pool
from hive.store.endings import end_many
from hive.store.listen import Listener

if TYPE_CHECKING:
    from pgqueuer import PgQueuer

HOLD = "hold"
# a serving worker's poll when no notification comes
SERVE_POLL_SECONDS = 5.0
PGQ_ENTRYPOINT = "noop"
PROC_TASK = "noop"


# ---- the hive --------------------------------------------------------------------------


def drain_hive(url: str, batch: int, barrier: Any, results: Any) -> None:
    """Claim up to `batch` orders in one statement (as a runner with `batch` free slots
    does in one pass), end them in one statement (as the runner's group commit writes
    endings that come together; one alone is written as one), again until none is left."""
    done = 0
    with pool.HeldConnection(url) as db:
        orders.listing(db)  # connected and warm before the clock starts
        barrier.wait()
        began = time.monotonic()
        while True:
            claimed = orders.claim_many(db, "peers", batch)
            if not claimed:
                break
            ending = [endings.OrderEnding(got.fence, Outcome.FINISHED) for got in claimed]
            if len(ending) == 1:
                endings.end(db, ending[0])
            else:
                end_many(db, ending)
            done += len(claimed)
        ended = time.monotonic()
    results.put({"done": done, "began": began, "ended": ended})


def serve_hive(url: str, ready: Any, picks: Any) -> None:
    """The claimer's loop: claim what there is, then wait for a NOTIFY or the poll."""
    with pool.HeldConnection(url) as db, Listener(url) as listener:
        ready.set()
        while True:
            got = orders.claim(db, "peers")
            if got is None:
                listener.wait(SERVE_POLL_SECONDS)
                continue
            picks.put((str(got.issue), time.time()))
            endings.end(db, endings.OrderEnding(got.fence, Outcome.FINISHED))


# ---- PgQueuer --------------------------------------------------------------------------


async def _pgqueuer(url: str) -> PgQueuer:
    """PgQueuer on asyncpg, its first driver (on psycopg its NOTIFY reader holds the
    connection for up to a second at a time, and every dequeue waits for it)."""
    import asyncpg
    from pgqueuer import AsyncpgDriver, PgQueuer

    info = psycopg.conninfo.conninfo_to_dict(url)
    conn = await asyncpg.connect(
        host=info.get("host"),
        port=int(info.get("port") or 5432),
        user=info.get("user"),
        password=info.get("password") or None,
        database=info.get("dbname"),
    )
    return PgQueuer(AsyncpgDriver(conn))


def drain_pgqueuer(url: str, batch: int, barrier: Any, results: Any) -> None:
    from pgqueuer.domain.types import QueueExecutionMode

    async def main() -> dict[str, Any]:
        pgq = await _pgqueuer(url)
        done = 0

        @pgq.entrypoint(PGQ_ENTRYPOINT)
        async def noop(job: Any) -> None:
            nonlocal done
            done += 1

        barrier.wait()
        began = time.monotonic()
        await pgq.qm.run(batch_size=batch, mode=QueueExecutionMode.drain)
        return {"done": done, "began": began, "ended": time.monotonic()}

    results.put(asyncio.run(main()))


def serve_pgqueuer(url: str, ready: Any, picks: Any, window_seconds: float = 30.0) -> None:
    """PgQueuer's own rescue: a job whose heartbeat is older than `heartbeat_timeout`
    is picked again by the next dequeue (every `dequeue_timeout` at the latest)."""

    async def main() -> None:
        pgq = await _pgqueuer(url)

        @pgq.entrypoint(PGQ_ENTRYPOINT)
        async def noop(job: Any) -> None:
            key = (job.payload or b"").decode()
            picks.put((key, time.time()))
            if key == HOLD:
                await asyncio.sleep(3600)

        ready.set()
        window = timedelta(seconds=window_seconds)
        await pgq.qm.run(batch_size=1, dequeue_timeout=window, heartbeat_timeout=window)

    asyncio.run(main())


def enqueue_pgqueuer(url: str, keys: list[str]) -> None:
    async def main() -> None:
        pgq = await _pgqueuer(url)
        assert pgq.queries is not None
        await pgq.queries.enqueue(
            [PGQ_ENTRYPOINT] * len(keys), [k.encode() for k in keys], [0] * len(keys)
        )

    asyncio.run(main())


def install_pgqueuer(url: str) -> None:
    async def main() -> None:
        pgq = await _pgqueuer(url)
        assert pgq.queries is not None
        await pgq.queries.install()

    asyncio.run(main())


# ---- Procrastinate ---------------------------------------------------------------------


def _procrastinate(url: str, on_job: Any = None) -> Any:
    import procrastinate

    app = procrastinate.App(connector=procrastinate.PsycopgConnector(conninfo=url))

    @app.task(name=PROC_TASK)
    async def noop(key: str = "") -> None:
        if on_job is not None:
            await on_job(key)

    return app


def drain_procrastinate(url: str, batch: int, barrier: Any, results: Any) -> None:
    """`batch` is the worker's concurrency (Procrastinate fetches one job a statement)."""
    done = 0

    async def count(key: str) -> None:
        nonlocal done
        done += 1

    app = _procrastinate(url, count)

    async def main() -> dict[str, Any]:
        async with app.open_async():
            barrier.wait()
            began = time.monotonic()
            await app.run_worker_async(
                concurrency=batch, wait=False, install_signal_handlers=False, delete_jobs="never"
            )
            return {"done": done, "began": began, "ended": time.monotonic()}

    results.put(asyncio.run(main()))


def serve_procrastinate(url: str, ready: Any, picks: Any, window_seconds: float = 30.0) -> None:
    """Its heartbeat every window / 4, stalled after the window; the rescue itself is
    the documented recipe the bench runs beside it (`rescue_procrastinate`)."""

    async def record(key: str) -> None:
        picks.put((key, time.time()))
        if key == HOLD:
            await asyncio.sleep(3600)

    app = _procrastinate(url, record)

    async def main() -> None:
        async with app.open_async():
            ready.set()
            await app.run_worker_async(
                concurrency=1,
                wait=True,
                install_signal_handlers=False,
                update_heartbeat_interval=window_seconds / 4,
                stalled_worker_timeout=window_seconds,
                fetch_job_polling_interval=SERVE_POLL_SECONDS,
            )

    asyncio.run(main())


def rescue_procrastinate(url: str, window_seconds: float, stop: Any) -> None:
    """Procrastinate's documented rescue, as a periodic task would run it: every window
    / 4, retry each job whose worker has not beaten for the window."""
    app = _procrastinate(url)

    async def main() -> None:
        async with app.open_async():
            while not stop.is_set():
                stalled = await app.job_manager.get_stalled_jobs(
                    seconds_since_heartbeat=window_seconds
                )
                for job in stalled:
                    await app.job_manager.retry_job(job)
                await asyncio.sleep(window_seconds / 4)

    asyncio.run(main())


def enqueue_procrastinate(url: str, keys: list[str]) -> None:
    app = _procrastinate(url)
    with app.open():
        app.tasks[PROC_TASK].batch_defer(*({"key": k} for k in keys))


def install_procrastinate(url: str) -> None:
    app = _procrastinate(url)
    with app.open():
        app.schema_manager.apply_schema()
