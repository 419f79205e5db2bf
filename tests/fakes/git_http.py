"""A private git host for the tests: the real `git http-backend` (smart HTTP, protocols
v0 and v2, fetch and push) as CGI behind `http.server` on 127.0.0.1, refusing every
request without the right HTTP Basic credentials (401 with `WWW-Authenticate`), as
GitHub refuses a private repository.

    with GitHttpServer(root, user="x-access-token", password=TOKEN) as server:
        url = server.url_of("origin.git")   # http://127.0.0.1:PORT/origin.git

`seen` lists the Authorization header of every request (None: none came);
`redirect_to` (a base URL) answers every request with a 302 there instead.
"""

from __future__ import annotations

import base64
import gzip
import os
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit


class GitHttpServer:
    def __init__(self, root: Path, *, user: str | None = None, password: str | None = None):
        self.root = Path(root)
        self.credentials = None if user is None else f"{user}:{password or ''}"
        self.seen: list[str | None] = []
        self.redirect_to: str | None = None
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def url_of(self, name: str) -> str:
        return f"{self.url}/{name}"

    def __enter__(self) -> GitHttpServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _allowed(self, header: str | None) -> bool:
        if self.credentials is None:
            return True
        if header is None or not header.startswith("Basic "):
            return False
        return base64.b64decode(header[6:]).decode() == self.credentials

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                self._serve()

            def do_POST(self) -> None:
                self._serve()

            def _body(self) -> bytes:
                if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                    out = bytearray()
                    while True:
                        size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                        if size == 0:
                            self.rfile.readline()
                            return bytes(out)
                        out += self.rfile.read(size)
                        self.rfile.readline()
                return self.rfile.read(int(self.headers.get("Content-Length") or 0))

            def _serve(self) -> None:
                auth = self.headers.get("Authorization")
                server.seen.append(auth)
                body = self._body() if self.command == "POST" else b""
                if server.redirect_to is not None:
                    self.send_response(302)
                    self.send_header("Location", server.redirect_to + self.path)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                if not server._allowed(auth):
                    self.send_response(401)
                    self.send_header("WWW-Authenticate", 'Basic realm="private"')
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                parts = urlsplit(self.path)
                env = {
                    "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                    "GIT_PROJECT_ROOT": str(server.root),
                    "GIT_HTTP_EXPORT_ALL": "1",
                    "REQUEST_METHOD": self.command,
                    "PATH_INFO": parts.path,
                    "QUERY_STRING": parts.query,
                    "CONTENT_TYPE": self.headers.get("Content-Type", ""),
                    "CONTENT_LENGTH": str(len(body)),
                    "REMOTE_USER": "hive",  # lets http-backend take a push
                    "REMOTE_ADDR": "127.0.0.1",
                    "GIT_PROTOCOL": self.headers.get("Git-Protocol", ""),
                    "HOME": str(server.root),
                }
                out = subprocess.run(
                    ["git", "http-backend"], input=body, env=env, capture_output=True, check=False
                ).stdout
                head, _, payload = out.partition(b"\r\n\r\n")
                status = 200
                headers = []
                for line in head.split(b"\r\n"):
                    name, _, value = line.decode().partition(":")
                    if name.lower() == "status":
                        status = int(value.strip().split()[0])
                    elif name:
                        headers.append((name, value.strip()))
                self.send_response(status)
                for name, value in headers:
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        return Handler
