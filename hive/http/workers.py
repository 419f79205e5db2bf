"""The HTTP server's worker threads: each takes a request the loop has read whole, runs
the routes, logs one line, and hands the answer back to the loop. Started and stopped
with the loop (`hive.http.connection.Loop`).
"""

from __future__ import annotations

import contextlib
import logging
import queue
import threading
import time
from collections.abc import Callable

from hive.http.conn import Conn
from hive.http.routes import Response, Routes

log = logging.getLogger("hive.http")

WORKER_JOIN_SECONDS = 5.0


class Workers:
    """`count` threads that answer requests; `answered(conn, response)` is called on the
    worker's thread once the routes have answered."""

    def __init__(
        self, routes: Routes, count: int, answered: Callable[[Conn, Response], None]
    ) -> None:
        self._routes = routes
        self._answered = answered
        # unbounded, so a stop's sentinels always fit; only the loop puts requests, and it
        # keeps them at most its `queue_max`
        self._jobs: queue.Queue[Conn | None] = queue.Queue()
        self._threads = [
            threading.Thread(target=self._work, name=f"hive-http-{i}", daemon=True)
            for i in range(count)
        ]

    def start(self) -> None:
        for thread in self._threads:
            thread.start()

    @property
    def waiting(self) -> int:
        """Requests read whole and waiting for a worker."""
        return self._jobs.qsize()

    def put(self, conn: Conn) -> None:
        """Hand a request read whole to the next free worker."""
        self._jobs.put(conn)

    def stop(self) -> None:
        """Drop the requests still waiting (the loop has closed their sockets), tell each
        worker to end, and wait up to WORKER_JOIN_SECONDS for them all."""
        with contextlib.suppress(queue.Empty):
            while True:
                self._jobs.get_nowait()
        for _ in self._threads:
            self._jobs.put(None)
        deadline = time.monotonic() + WORKER_JOIN_SECONDS
        for thread in self._threads:  # a worker stuck in a route is left behind (daemon)
            thread.join(max(0.0, deadline - time.monotonic()))

    def _work(self) -> None:
        while True:
            conn = self._jobs.get()
            if conn is None:
                return
            request = conn.request
            assert request is not None
            response = self._routes.answer(request)
            log_answer(self._routes, conn, response)
            self._answered(conn, response)


def log_answer(routes: Routes, conn: Conn, response: Response) -> None:
    """Log one line for an answer: method, path, status, time taken and the client."""
    request = conn.request
    method = request.method if request else "-"
    path = routes.shown(request.path) if request else "-"
    quiet = request is not None and routes.quiet(request, response.status)
    level = logging.DEBUG if quiet else logging.INFO
    millis = (time.monotonic() - conn.started) * 1000
    # the path only, never the query string nor a header
    log.log(level, "%s %s %d %.0f ms from %s", method, path, response.status, millis, conn.addr)
