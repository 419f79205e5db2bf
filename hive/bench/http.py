"""http: 50 clients on /metrics and /api/orders while 100 slow clients hold connections.

Each server runs in a process of its own over the same routes and a scratch database
(`--orders` orders, so /api/orders reads real rows); the load runs in another process
(`hive.bench.http_load`). Servers compared:

- `pool`: the hive's own (`hive.http.server`): one loop owns the sockets, reads each
  request whole within a deadline, and only then hands it to a fixed pool of workers.
- `threads`: the standard library's ThreadingHTTPServer as the hive ran it before: a
  thread per connection, a listen backlog of 5, a per-read timeout and no deadline.
- `waitress`: waitress (pure Python, from PyPI; measured when it is installed) with the
  same number of worker threads, its backlog at 1024 and enough connection slots.

The goal: p99 under 100 ms and no errors for the 50 clients, slow clients connected.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import statistics
import subprocess
import sys
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from hive.bench.arguments import seconds, whole
from hive.errors import HiveError
from hive.http.server import WORKERS as SERVER_WORKERS
from hive.rules.branches import branch_name
from hive.settings import Settings
from hive.store import connect, scratch

SERVERS = ("pool", "threads", "waitress")
GOAL_P99_MS = 100.0
WORKERS = SERVER_WORKERS  # waitress gets as many threads as the hive has workers
START_TIMEOUT_SECONDS = 30.0
THREADS_BACKLOG = 5  # socketserver's request_queue_size, as the hive had it
THREADS_READ_TIMEOUT_SECONDS = 30.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--clients", type=whole(1, 500), default=50, help="fast clients (50)")
    parser.add_argument("--slow", type=whole(0, 500), default=100, help="slow clients (100)")
    parser.add_argument(
        "--seconds", type=seconds(1, 600), default=10.0, help="how long each server is loaded (10)"
    )
    parser.add_argument("--orders", type=whole(0, 10_000), default=50, help="orders listed (50)")
    parser.add_argument(
        "--runs", type=whole(1, 20), default=3, help="runs per server; figures are medians (3)"
    )
    parser.add_argument(
        "--server",
        choices=(*SERVERS, "all"),
        default="all",
        help="the server to load, or all of them in turn (all)",
    )


def run(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    url = connect.database_url(settings)
    connect.check_reachable(url)
    chosen = SERVERS if args.server == "all" else (args.server,)
    # the machine's load beside the figures: on a shared machine they move with it
    result: dict[str, Any] = {
        "clients": args.clients,
        "slow": args.slow,
        "load_average_before": round(os.getloadavg()[0], 2),
    }
    with scratch.database(url) as db_url:
        _seed(db_url, args.orders)
        for kind in chosen:
            if kind == "waitress" and not _has_waitress():
                result["waitress"] = "not installed (pip install 'hive[bench]')"
                continue
            runs = [_measure(kind, db_url, args) for _ in range(args.runs)]
            for name in ("p50_ms", "p99_ms", "max_ms", "per_s"):
                result[f"{kind}_{name}"] = statistics.median(r[name] for r in runs)
            result[f"{kind}_errors"] = sum(r["errors"] for r in runs)
            # slow clients the server answered (a 408 at its deadline) and that came back
            result[f"{kind}_slow_answered"] = sum(r["slow_answered"] for r in runs)
            kinds: Counter[str] = Counter()
            for r in runs:
                kinds.update(r["error_kinds"])
            if kinds:
                result[f"{kind}_error_kinds"] = dict(kinds)
    result["load_average_after"] = round(os.getloadavg()[0], 2)
    result["goal_met"] = (
        result.get("pool_p99_ms", float("inf")) < GOAL_P99_MS and result.get("pool_errors") == 0
    )
    return result


def _has_waitress() -> bool:
    try:
        import waitress  # noqa: F401
    except ImportError:
        return False
    return True


def _seed(db_url: str, count: int) -> None:
    from hive.store import orders, pool
    from hive.store.orders import NewOrder

    with pool.connect(db_url) as conn:
        for issue in range(1, count + 1):
            order = NewOrder(issue, branch_name(issue), "main", brief="x" * 200)
            orders.insert(conn, order, queued=True)


def _measure(kind: str, db_url: str, args: argparse.Namespace) -> dict[str, Any]:
    server = subprocess.Popen(
        [sys.executable, "-m", "hive.bench.http", kind, db_url],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,  # the threads server prints a traceback per broken pipe
        text=True,
    )
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        if not line.strip().isdigit():
            raise HiveError(f"the {kind} server did not start (it said {line.strip()!r})")
        load = subprocess.run(
            [
                sys.executable,
                "-m",
                "hive.bench.http_load",
                line.strip(),
                str(args.clients),
                str(args.slow),
                str(args.seconds),
            ],
            capture_output=True,
            text=True,
            timeout=args.seconds + 120,
            check=True,
        )
        figures: dict[str, Any] = json.loads(load.stdout)
        return figures
    finally:
        server.kill()
        server.wait()


# ---- the server process ----------------------------------------------------------------


def _serve(kind: str, db_url: str) -> None:
    """Serve the hive's routes on the scratch database with server `kind` until stdin
    closes; print the port first."""
    from hive.http import HttpConfig, store_surface
    from hive.http.routes import Routes
    from hive.metrics import HiveMetrics
    from hive.services.orders import queue_numbers
    from hive.store.pool import make_pool

    logging.getLogger("waitress").setLevel(logging.ERROR)  # a line per queued task
    settings = Settings.from_env()
    db = make_pool(db_url, min_size=1, max_size=WORKERS, name=f"bench-{kind}")
    metrics = HiveMetrics()
    metrics.watch_queue(lambda: queue_numbers(db))
    surface = store_surface(settings, db, db_url, metrics.registry, lambda: False)
    if kind == "pool":
        from hive.http import ExportServer

        pooled = ExportServer(HttpConfig(port=0, workers=WORKERS), surface)
        pooled.start()
        port = pooled.port
    elif kind == "threads":
        port = _threads_server(Routes(surface, None, HttpConfig.body_max_bytes))
    else:
        port = _waitress_server(Routes(surface, None, HttpConfig.body_max_bytes))
    print(port, flush=True)
    sys.stdin.read()
    os._exit(0)  # the threads server's threads are stuck in reads: no clean stop needed


def _threads_server(routes: Any) -> int:
    from hive.http.routes import Request

    class Handler(BaseHTTPRequestHandler):
        timeout = THREADS_READ_TIMEOUT_SECONDS

        def do_GET(self) -> None:
            self._answer()

        def do_POST(self) -> None:
            self._answer()

        def _answer(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            headers = {k.lower(): v for k, v in self.headers.items()}
            body = self.rfile.read(length) if length else b""
            response = routes.answer(
                Request(self.command, self.path, headers, body, self.client_address[0])
            )
            self.send_response(response.status)
            if response.content_type:
                self.send_header("Content-Type", response.content_type)
            self.send_header("Content-Length", str(len(response.body)))
            self.end_headers()
            self.wfile.write(response.body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    class Server(ThreadingHTTPServer):
        daemon_threads = True
        request_queue_size = THREADS_BACKLOG

    server = Server(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return int(server.server_address[1])


def _waitress_server(routes: Any) -> int:
    import waitress

    from hive.http.routes import Request, reason

    def app(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        length = int(environ.get("CONTENT_LENGTH") or 0)
        body = environ["wsgi.input"].read(length) if length else b""
        headers = {
            k[5:].replace("_", "-").lower(): v for k, v in environ.items() if k.startswith("HTTP_")
        }
        target = environ.get("PATH_INFO", "/")
        response = routes.answer(Request(environ["REQUEST_METHOD"], target, headers, body))
        sent = [("Content-Length", str(len(response.body))), *response.headers]
        if response.content_type:
            sent.append(("Content-Type", response.content_type))
        start_response(f"{response.status} {reason(response.status)}", sent)
        return [response.body]

    server = waitress.create_server(
        app,
        host="127.0.0.1",
        port=0,
        threads=WORKERS,
        backlog=1024,
        connection_limit=1000,
        channel_timeout=10,
        asyncore_use_poll=True,
    )
    threading.Thread(target=server.run, daemon=True).start()
    return int(server.effective_port)


if __name__ == "__main__":
    _serve(sys.argv[1], sys.argv[2])
