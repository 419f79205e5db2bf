"""The runner's egress proxy: with HIVE_AGENT_NETWORK=allow, the only way out of a turn.

A sandboxed turn has no network of its own. Its HTTPS_PROXY (and HTTP_PROXY) points at
this proxy, which serves two kinds of request and nothing else:
- `CONNECT host:port` (what HTTPS clients send): tunnelled when `host:port` is in
  HIVE_AGENT_ALLOW_HOSTS, refused with 403 otherwise;
- a plain-HTTP request in absolute form (`GET http://host:port/path`): forwarded once,
  with `Connection: close`, under the same rule.
It listens on a Unix socket (bubblewrap binds it into the turn, whose relay carries
127.0.0.1:3128 to it) and on a loopback TCP port (a Landlock-only turn may connect to
that port and no other).
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import socketserver
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path

from hive.agents.sandbox_exec import pipe

log = logging.getLogger("hive.egress")

HEAD_MAX_BYTES = 64 * 1024
CONNECT_TIMEOUT_SECONDS = 10.0
CHUNK_BYTES = 65536
SOCKET_NAME = "proxy.sock"


class Refusal(ValueError):
    """A request the proxy does not carry; `str()` is the reason sent back."""


@dataclass(frozen=True)
class Request:
    """One request's head: where it goes, and the bytes to send there first (empty for a
    CONNECT, whose client speaks next)."""

    host: str
    port: int
    tunnel: bool
    head: bytes = b""


def parse_head(head: bytes) -> Request:
    """Read a proxy request's head (up to and with its blank line)."""
    try:
        text = head.decode("latin-1")
        first, *rest = text.split("\r\n")
        method, target, version = first.split(" ")
    except ValueError:
        raise Refusal("not an HTTP request") from None
    if method == "CONNECT":
        host, port = _host_port(target, None)
        return Request(host, port, tunnel=True)
    if not target.lower().startswith("http://"):
        raise Refusal("only CONNECT and absolute http:// requests pass this proxy")
    where, slash, path = target[len("http://") :].partition("/")
    host, port = _host_port(where, 80)
    headers = [
        line
        for line in rest
        if line and not line.lower().startswith(("proxy-", "connection:", "keep-alive:"))
    ]
    origin = f"{method} {slash}{path} {version}\r\n"
    forwarded = origin + "\r\n".join([*headers, "Connection: close"]) + "\r\n\r\n"
    return Request(host, port, tunnel=False, head=forwarded.encode("latin-1"))


def _host_port(where: str, default: int | None) -> tuple[str, int]:
    host, colon, port = where.rpartition(":")
    if not colon or "]" in port:
        host, port = where, ""
    host = host.strip("[]").lower()
    if not port and default is not None:
        return host, default
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise Refusal(f"not a host:port ({where!r})")
    return host, int(port)


def allowed(request: Request, allow: frozenset[str]) -> bool:
    return f"{request.host}:{request.port}" in allow


@dataclass
class Proxy:
    """The proxy, serving on its own threads once `start()` returned."""

    allow: frozenset[str]
    directory: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="hive-proxy-")))
    refused: int = 0
    _servers: list[socketserver.BaseServer] = field(default_factory=list)

    @property
    def socket_path(self) -> str:
        return str(self.directory / SOCKET_NAME)

    @property
    def port(self) -> int:
        return int(self._servers[1].server_address[1])  # type: ignore[index]

    def start(self) -> Proxy:
        handler = self._handler()
        unix = socketserver.ThreadingUnixStreamServer(self.socket_path, handler)
        tcp = socketserver.ThreadingTCPServer(("127.0.0.1", 0), handler)
        for server in (unix, tcp):
            server.daemon_threads = True
            self._servers.append(server)
            threading.Thread(target=server.serve_forever, name="egress", daemon=True).start()
        return self

    def close(self) -> None:
        for server in self._servers:
            server.shutdown()
            server.server_close()
        try:
            os.unlink(self.socket_path)
            os.rmdir(self.directory)
        except OSError:
            pass

    def _handler(self) -> type[socketserver.BaseRequestHandler]:
        proxy = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                proxy._serve(self.request)

        return Handler

    def _serve(self, client: socket.socket) -> None:
        try:
            head, extra = _read_head(client)
            request = parse_head(head)
            if not allowed(request, self.allow):
                raise Refusal(f"{request.host}:{request.port} is not in HIVE_AGENT_ALLOW_HOSTS")
        except Refusal as refusal:
            self.refused += 1
            log.info("egress: refused: %s", refusal)
            _answer(client, b"403 Forbidden", str(refusal))
            return
        except OSError:
            return
        try:
            upstream = socket.create_connection(
                (request.host, request.port), timeout=CONNECT_TIMEOUT_SECONDS
            )
        except OSError as exc:
            _answer(client, b"502 Bad Gateway", f"{request.host}:{request.port}: {exc}")
            return
        upstream.settimeout(None)
        if request.tunnel:
            client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
        else:
            upstream.sendall(request.head)
        if extra:
            upstream.sendall(extra)
        other = threading.Thread(target=pipe, args=(upstream, client), daemon=True)
        other.start()
        pipe(client, upstream)
        other.join()


def _read_head(client: socket.socket) -> tuple[bytes, bytes]:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = client.recv(CHUNK_BYTES)
        if not chunk:
            raise Refusal("the request ended before its head")
        data += chunk
        if len(data) > HEAD_MAX_BYTES:
            raise Refusal("a request head over 64 KiB")
    head, _, extra = data.partition(b"\r\n\r\n")
    return head + b"\r\n\r\n", extra


def _answer(client: socket.socket, status: bytes, reason: str) -> None:
    body = (reason + "\n").encode()
    with contextlib.suppress(OSError):
        client.sendall(
            b"HTTP/1.1 " + status + b"\r\nContent-Type: text/plain\r\nConnection: close\r\n"
            b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body
        )
