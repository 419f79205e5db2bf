"""The load `hive bench http` puts on a server, run in a process of its own (so the
clients' work does not share the server's interpreter lock).

`python -m hive.bench.http_load PORT CLIENTS SLOW SECONDS` prints one JSON object: the
fast clients' latencies and errors. Fast clients ask `/metrics` and `/api/orders` in
turn, one request per connection, as long as the run lasts; a request is an error when
its answer is not 200 or takes longer than `REQUEST_TIMEOUT_SECONDS`. Slow clients stay
connected all the while: each sends the start of a head and then one byte every
`SLOW_BYTE_SECONDS`, never finishing, and connects again whenever it is answered or
dropped. Only loopback is ever a target.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import time
from typing import Any

HOST = "127.0.0.1"
PATHS = ("/metrics", "/api/orders")
REQUEST_TIMEOUT_SECONDS = 10.0
SLOW_BYTE_SECONDS = 2.0
# the slow clients connect first; the fast ones start once they are all connected
SLOW_SETTLE_SECONDS = 1.0


async def _fast(port: int, index: int, until: float, found: dict[str, Any]) -> None:
    n = index
    while time.monotonic() < until:
        path = PATHS[n % len(PATHS)]
        n += 1
        began = time.monotonic()
        try:
            status = await asyncio.wait_for(_one(port, path), REQUEST_TIMEOUT_SECONDS)
        except (TimeoutError, OSError, ValueError) as err:
            found["errors"][type(err).__name__] = found["errors"].get(type(err).__name__, 0) + 1
            continue
        found["ms"].append((time.monotonic() - began) * 1000)
        if status != 200:
            found["errors"][str(status)] = found["errors"].get(str(status), 0) + 1


async def _one(port: int, path: str) -> int:
    reader, writer = await asyncio.open_connection(HOST, port)
    try:
        writer.write(f"GET {path} HTTP/1.1\r\nHost: bench\r\nConnection: close\r\n\r\n".encode())
        await writer.drain()
        answer = await reader.read()
    finally:
        writer.close()
    if not answer.startswith(b"HTTP/1."):
        raise ValueError("no status line")
    return int(answer.split(b" ", 2)[1])


async def _slow(port: int, until: float, counts: dict[str, int]) -> None:
    while time.monotonic() < until:
        try:
            reader, writer = await asyncio.open_connection(HOST, port)
        except OSError:
            counts["connect_failed"] += 1
            await asyncio.sleep(SLOW_BYTE_SECONDS)
            continue
        counts["connected"] += 1
        try:
            writer.write(b"GET /metrics HTTP/1.1\r\nHost: bench\r\nX-Slow: ")
            while time.monotonic() < until and not reader.at_eof():
                await writer.drain()
                try:
                    if await asyncio.wait_for(reader.read(65536), SLOW_BYTE_SECONDS):
                        counts["answered"] += 1  # a 408, say: connect again
                        break
                except TimeoutError:
                    writer.write(b"x")
        except OSError:
            counts["dropped"] += 1
        finally:
            writer.close()


async def load(port: int, clients: int, slow: int, seconds: float) -> dict[str, Any]:
    until = time.monotonic() + SLOW_SETTLE_SECONDS + seconds
    counts = {"connected": 0, "answered": 0, "dropped": 0, "connect_failed": 0}
    slow_tasks = [asyncio.create_task(_slow(port, until, counts)) for _ in range(slow)]
    await asyncio.sleep(SLOW_SETTLE_SECONDS)
    found: dict[str, Any] = {"ms": [], "errors": {}}
    began = time.monotonic()
    await asyncio.gather(*(_fast(port, i, until, found) for i in range(clients)))
    took = time.monotonic() - began
    for task in slow_tasks:
        task.cancel()
    await asyncio.gather(*slow_tasks, return_exceptions=True)
    ms = sorted(found["ms"]) or [0.0]
    return {
        "requests": len(found["ms"]),
        "per_s": len(found["ms"]) / took if took else 0.0,
        "p50_ms": statistics.median(ms),
        "p99_ms": ms[min(len(ms) - 1, int(len(ms) * 0.99))],
        "max_ms": ms[-1],
        "errors": sum(found["errors"].values()),
        "error_kinds": found["errors"],
        "slow_connects": counts["connected"],
        "slow_answered": counts["answered"],
    }


def main(argv: list[str]) -> int:
    port, clients, slow = (int(a) for a in argv[:3])
    seconds = float(argv[3])
    print(json.dumps(asyncio.run(load(port, clients, slow, seconds))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
