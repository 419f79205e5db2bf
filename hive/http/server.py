"""The one small HTTP server per process (DESIGN 8): one loop thread owns every socket,
a fixed pool of workers runs the routes.

The loop accepts (backlog `BACKLOG`), reads each request whole (its headers and its body,
within `REQUEST_DEADLINE_SECONDS` of the accept, else 408), and only then hands it to a
worker; a worker computes the answer and hands the bytes back to the loop, which writes
them as the client reads (a stalled reader is dropped after `WRITE_STALL_SECONDS`). So a
slow or silent client holds a socket, never a worker, and the pool (`WORKERS`) serves the
probes and the API whatever the slow ones do. When `QUEUE_MAX` requests already wait for
a worker, or `CONNECTIONS_MAX` sockets are open, the answer is an at-once 503. A
long-lived stream (the board's events) fits the same shape: the loop keeps its socket and
writes what a producer hands it, so it holds no worker either.

`ExportServer(config, surface)` binds on `start()`; `stop()` is safe twice and before
`start()`. Everything a route reads comes in through `Surface` as plain callables, so the
server knows no actor and the tree decides what readiness means.
"""

from __future__ import annotations

import ipaddress
import logging
import socket
import threading
from dataclasses import dataclass, field

from hive.errors import HiveError
from hive.http.connection import Loop
from hive.http.routes import Routes
from hive.http.stream import STREAMS_MAX
from hive.http.surface import Surface
from hive.settings import Settings

log = logging.getLogger("hive.http")

BODY_MAX_BYTES = 64 * 1024  # a new issue is a title, a body and a few lists
WORKERS = 32  # the routes wait on the store or on a listing another worker computes
QUEUE_MAX = 64  # requests read whole and waiting for a worker; one more is a 503
CONNECTIONS_MAX = 512  # open sockets (slow clients included); one more is a 503
BACKLOG = 1024  # connections the kernel holds before the loop accepts them


@dataclass(frozen=True)
class HttpConfig:
    host: str = "127.0.0.1"
    port: int = 8080  # 0 = any free port (tests); ExportServer.port tells which
    api_token: str | None = field(default=None, repr=False)  # never printed
    body_max_bytes: int = BODY_MAX_BYTES
    workers: int = WORKERS
    queue_max: int = QUEUE_MAX
    connections_max: int = CONNECTIONS_MAX
    streams_max: int = STREAMS_MAX
    board_public: bool = False  # HIVE_BOARD_PUBLIC: the read-only board without the token

    @classmethod
    def from_settings(cls, settings: Settings) -> HttpConfig:
        return cls(
            settings.http_host,
            settings.http_port,
            settings.api_token,
            board_public=settings.board_public,
        )


def is_loopback(host: str) -> bool:
    """True when every address `host` names is a loopback one."""
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, None)
    except (socket.gaierror, UnicodeError):
        return False
    return bool(infos) and all(ipaddress.ip_address(i[4][0]).is_loopback for i in infos)


def check_config(config: HttpConfig) -> None:
    """Raise HiveError (one line) for a config `start()` would refuse: a non-loopback
    address without a token. `hive serve` calls it before it starts anything."""
    if not config.api_token and not is_loopback(config.host):
        raise HiveError(
            f"refusing to serve HTTP on {config.host}:{config.port} without HIVE_API_TOKEN: "
            "set a token, or bind a loopback address (127.0.0.1)"
        )


class ExportServer:
    """Lifecycle: `start()` binds and serves (raises HiveError if it cannot: a non-loopback
    address without a token, a port in use); `stop()` stops serving, closes every socket
    and lets the workers finish the request in hand; both are safe to call twice, `stop()`
    before `start()` does nothing."""

    def __init__(self, config: HttpConfig, surface: Surface) -> None:
        self.config = config
        self.surface = surface
        self._lock = threading.Lock()
        self._loop: Loop | None = None
        self._routes: Routes | None = None

    @property
    def port(self) -> int:
        """The bound port (the real one when the config asked for 0)."""
        if self._loop is None:
            raise RuntimeError("the HTTP server is not started")
        return self._loop.port

    @property
    def waiting(self) -> int:
        """Requests read whole and waiting for a worker (0 when not started)."""
        return self._loop.waiting if self._loop is not None else 0

    @property
    def url(self) -> str:
        host = self.config.host
        return f"http://{'[' + host + ']' if ':' in host else host}:{self.port}"

    def start(self) -> None:
        with self._lock:
            if self._loop is not None:
                return
            check_config(self.config)
            listener = _listen(self.config.host, self.config.port)
            routes = Routes(
                self.surface,
                self.config.api_token,
                self.config.body_max_bytes,
                board_public=self.config.board_public,
            )
            self._routes = routes
            self._loop = Loop(
                listener,
                routes,
                workers=self.config.workers,
                queue_max=self.config.queue_max,
                connections_max=self.config.connections_max,
                streams_max=self.config.streams_max,
                stream_refused=self.surface.stream_refused,
            )
            self._loop.start()
        log.info("serving on %s", self.url)

    def stop(self) -> None:
        with self._lock:
            loop, self._loop = self._loop, None
            routes, self._routes = self._routes, None
        if loop is None:
            return
        loop.stop()  # closes every stream: none holds the stop up
        if routes is not None:
            routes.close()
        log.info("stopped")


def _listen(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(BACKLOG)
    except OSError as err:
        sock.close()
        reason = err.strerror or str(err)
        raise HiveError(f"cannot serve HTTP on {host}:{port}: {reason}") from None
    sock.setblocking(False)
    return sock
