"""The one small HTTP server per process (DESIGN 8), on the standard library's
`ThreadingHTTPServer`: no framework in the image, one thread per request.

`ExportServer(config, surface)` binds on `start()` and serves from a thread of its own;
`stop()` is safe twice and before `start()`. Everything a route reads comes in through
`Surface` as plain callables, so the server knows no actor and the tree decides what
readiness means.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
import logging
import re
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import psycopg
from prometheus_client import CollectorRegistry
from prometheus_client.exposition import choose_encoder

from hive.errors import HiveError
from hive.http.surface import Surface
from hive.services import issues
from hive.services.errors import ServiceError
from hive.services.export import bundle_name
from hive.settings import Settings

log = logging.getLogger("hive.http")

BODY_MAX_BYTES = 64 * 1024  # a new issue is a title, a body and a few lists
REQUEST_TIMEOUT_SECONDS = 30.0  # a silent client frees its thread after this
# serve_forever looks for a stop this often: stop() returns within it
STOP_POLL_SECONDS = 0.05
# Probes and scrapes arrive every few seconds; their access lines would drown the rest.
QUIET_PATHS = frozenset({"/healthz", "/readyz", "/metrics"})
OPEN_PATHS = QUIET_PATHS  # answered without the token: probes and scrapers carry none
# GET /api/issues/<n>, POST /api/issues/<n>/approve and /close (DESIGN 10)
ISSUE_PATH = re.compile(r"/api/issues/(?P<issue>[^/]+)(?:/(?P<action>approve|close))?")


@dataclass(frozen=True)
class HttpConfig:
    host: str = "127.0.0.1"
    port: int = 8080  # 0 = any free port (tests); ExportServer.port tells which
    api_token: str | None = field(default=None, repr=False)  # never printed
    body_max_bytes: int = BODY_MAX_BYTES

    @classmethod
    def from_settings(cls, settings: Settings) -> HttpConfig:
        return cls(settings.http_host, settings.http_port, settings.api_token)


def is_loopback(host: str) -> bool:
    """True when every address `host` names is a loopback one."""
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, None)
    except socket.gaierror:
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
    address without a token, a port in use); `stop()` stops serving and closes the socket,
    waiting for no request in flight; both are safe to call twice, `stop()` before
    `start()` does nothing."""

    def __init__(self, config: HttpConfig, surface: Surface) -> None:
        self.config = config
        self.surface = surface
        self._lock = threading.Lock()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        """The bound port (the real one when the config asked for 0)."""
        if self._server is None:
            raise RuntimeError("the HTTP server is not started")
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        host = self.config.host
        return f"http://{'[' + host + ']' if ':' in host else host}:{self.port}"

    def start(self) -> None:
        with self._lock:
            if self._server is not None:
                return
            check_config(self.config)
            server_class = _Server6 if ":" in self.config.host else _Server
            try:
                server = server_class((self.config.host, self.config.port), _Handler)
            except OSError as err:
                raise HiveError(
                    f"cannot serve HTTP on {self.config.host}:{self.config.port}: {err.strerror}"
                ) from None
            server.hive = self
            self._server = server
            self._thread = threading.Thread(
                target=server.serve_forever,
                args=(STOP_POLL_SECONDS,),
                name="hive-http",
                daemon=True,
            )
            self._thread.start()
        log.info("serving on %s", self.url)

    def stop(self) -> None:
        with self._lock:
            server, thread = self._server, self._thread
            self._server = self._thread = None
        if server is None:
            return
        server.shutdown()  # returns once serve_forever has left its loop
        server.server_close()
        if thread is not None:
            thread.join()
        log.info("stopped")


class _Server(ThreadingHTTPServer):
    daemon_threads = True  # a download in flight never holds the process past its stop
    hive: ExportServer


class _Server6(_Server):
    address_family = socket.AF_INET6


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    timeout = REQUEST_TIMEOUT_SECONDS
    server_version = "hive"

    # ---- dispatch ------------------------------------------------------------------

    def do_GET(self) -> None:
        self._route("GET")

    def do_POST(self) -> None:
        self._route("POST")

    def _route(self, method: str) -> None:
        self._started = time.monotonic()
        path = self.path.split("?", 1)[0]
        hive = self.server.hive
        surface = hive.surface
        routes: dict[str, tuple[str, Callable[[], None]]] = {
            "/healthz": ("GET", lambda: self._json(200, {"alive": True})),
            "/readyz": ("GET", lambda: self._readyz(surface)),
            "/metrics": ("GET", lambda: self._metrics(surface.registry)),
            "/queen/export": ("GET", lambda: self._branches(surface)),
            "/api/orders": ("GET", lambda: self._orders(surface)),
            "/api/issues": ("POST", lambda: self._add_issue(hive)),
        }
        if path.startswith("/queen/export/"):
            issue = path.removeprefix("/queen/export/")
            routes[path] = ("GET", lambda: self._bundle(surface, issue))
        about = ISSUE_PATH.fullmatch(path)
        if about is not None:
            text, action = about["issue"], about["action"]
            if action is None:
                routes[path] = ("GET", lambda: self._issue(surface, text))
            else:
                routes[path] = ("POST", lambda: self._issue_action(surface, action, text))
        try:
            if path not in OPEN_PATHS and not self._authorized(hive.config.api_token):
                return
            if path not in routes:
                return self._error(404, f"no route {path}")
            allowed, answer = routes[path]
            if method != allowed:
                return self._error(
                    405, f"{method} is not allowed here; use {allowed}", {"Allow": allowed}
                )
            answer()
        except (BrokenPipeError, ConnectionResetError):
            log.debug("%s %s: the client went away", method, path)
            self.close_connection = True
        except ServiceError as err:  # a use case's refusal carries its status
            self._error(err.status, str(err))
        except psycopg.OperationalError as err:
            log.warning("%s %s: the store is unreachable: %s", method, path, _first_line(err))
            self._error(503, "the store is unreachable; try again")
        except HiveError as err:  # a git or store problem the operator can read and act on
            log.error("%s %s: %s", method, path, err)
            self._error(500, str(err))
        except Exception:
            log.exception("%s %s failed", method, path)
            self._error(500, "internal error; the server's log has the cause")

    def _authorized(self, token: str | None) -> bool:
        if not token:
            return True
        given = self.headers.get("Authorization", "").encode("utf-8", "replace")
        # digests of equal length: the comparison's time tells nothing, not even the length
        wanted = hashlib.sha256(f"Bearer {token}".encode()).digest()
        if hmac.compare_digest(hashlib.sha256(given).digest(), wanted):
            return True
        self._error(
            401, "missing or wrong bearer token", {"WWW-Authenticate": 'Bearer realm="hive"'}
        )
        return False

    # ---- routes --------------------------------------------------------------------

    def _readyz(self, surface: Surface) -> None:
        reasons = []
        if _asks(surface.draining, "draining", default=True):
            reasons.append("draining")
        if not _asks(surface.store_reachable, "store_reachable", default=False):
            reasons.append("store unreachable")
        if reasons:
            self._json(503, {"ready": False, "error": ", ".join(reasons)})
        else:
            self._json(200, {"ready": True})

    def _metrics(self, registry: CollectorRegistry) -> None:
        encoder, content_type = choose_encoder(self.headers.get("Accept", ""))
        self._send(200, encoder(registry), content_type)

    def _branches(self, surface: Surface) -> None:
        if surface.exports is None:
            return self._error(503, "exports are not served by this process")
        self._json(200, surface.exports.branches())

    def _bundle(self, surface: Surface, text: str) -> None:
        issue = issues.issue_number(text)
        if surface.exports is None:
            return self._error(503, "exports are not served by this process")
        ref = surface.exports.find(issue)
        etag = f'"{ref.head_sha}"'
        headers = {"ETag": etag, "X-Hive-Bundle-Source": ref.source}
        if _matches(self.headers.get("If-None-Match"), etag):
            return self._send(304, b"", None, headers)
        headers["Content-Disposition"] = f'attachment; filename="{bundle_name(issue)}"'
        self._send(200, ref.read(), "application/octet-stream", headers)

    def _orders(self, surface: Surface) -> None:
        if surface.orders is None:
            return self._error(503, "orders are not served by this process")
        self._json(200, surface.orders())

    def _add_issue(self, hive: ExportServer) -> None:
        if hive.surface.add_issue is None:
            return self._error(503, "issues are not accepted by this process")
        length = self.headers.get("Content-Length")
        if length is None or not length.isdigit():
            return self._error(411, "a Content-Length is required")
        if int(length) > hive.config.body_max_bytes:
            return self._error(413, f"body: larger than {hive.config.body_max_bytes} bytes")
        raw = self.rfile.read(int(length))
        try:
            data = json.loads(raw)
        except (UnicodeDecodeError, json.JSONDecodeError) as err:
            return self._error(400, f"body: not JSON ({err})")
        number = hive.surface.add_issue(issues.from_json(data))
        self._json(201, {"number": number}, {"Location": f"/api/issues/{number}"})

    def _issue(self, surface: Surface, text: str) -> None:
        number = issues.issue_number(text)
        if surface.issue is None:
            return self._error(503, "issues are not served by this process")
        self._json(200, surface.issue(number))

    def _issue_action(self, surface: Surface, action: str, text: str) -> None:
        number = issues.issue_number(text)
        act = surface.approve if action == "approve" else surface.close_issue
        if act is None:
            return self._error(503, f"{action} is not served by this process")
        if not self._skip_body():
            return
        self._json(200, act(number))

    def _skip_body(self) -> bool:
        """Read and drop a body the route does not use (the connection stays usable);
        False once it answered a body too large."""
        length = self.headers.get("Content-Length", "0")
        size = int(length) if length.isdigit() else 0
        if size > self.server.hive.config.body_max_bytes:
            self._error(413, f"body: larger than {self.server.hive.config.body_max_bytes} bytes")
            self.close_connection = True
            return False
        if size:
            self.rfile.read(size)
        return True

    # ---- answers -------------------------------------------------------------------

    def _json(self, status: int, value: Any, headers: dict[str, str] | None = None) -> None:
        body = json.dumps(value, default=str).encode() + b"\n"
        self._send(status, body, "application/json", headers)

    def _error(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        self._json(status, {"error": message}, headers)

    def _send(
        self,
        status: int,
        body: bytes,
        content_type: str | None,
        headers: dict[str, str] | None = None,
    ) -> None:
        self.send_response(status)
        if content_type:
            self.send_header("Content-Type", content_type)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if body:
            self.wfile.write(body)
        self._sent = len(body)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        # the standard library's answers (bad request line, unknown method) in our JSON
        self._started = getattr(self, "_started", time.monotonic())
        self.close_connection = True
        self._error(code, message or self.responses.get(code, ("error",))[0])

    # ---- access log ------------------------------------------------------------------

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        path = self.path.split("?", 1)[0] if hasattr(self, "path") else "-"
        level = logging.DEBUG if path in QUIET_PATHS and code in (200, "200") else logging.INFO
        millis = (time.monotonic() - getattr(self, "_started", time.monotonic())) * 1000
        method = getattr(self, "command", None) or "-"
        # the path only, never the query string nor a header
        text = f"{method} {path} {code} {millis:.0f} ms from {self.client_address[0]}"
        log.log(level, "%s", self._redact(text))

    def log_message(self, format: str, *args: Any) -> None:
        log.info("%s", self._redact(format % args))

    def _redact(self, text: str) -> str:
        # a client that puts the token in its path must not get it into the log
        token = self.server.hive.config.api_token
        return text.replace(token, "<token>") if token else text


def _asks(question: Callable[[], bool], name: str, default: bool) -> bool:
    try:
        return bool(question())
    except Exception:
        log.exception("readiness: %s raised", name)
        return default


def _first_line(err: Exception) -> str:
    text = str(err).strip()
    return text.splitlines()[-1] if text else type(err).__name__


def _matches(if_none_match: str | None, etag: str) -> bool:
    if not if_none_match:
        return False
    if if_none_match.strip() == "*":
        return True
    return any(tag.strip().removeprefix("W/") == etag for tag in if_none_match.split(","))
