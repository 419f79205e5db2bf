"""A loopback TCP port that carries each connection to the test's PostgreSQL and counts
them, so a test sees how many connections a process opens to the store; `cut()` makes
the store go away as its clients see it (every connection dropped, new ones refused),
`mend()` brings it back on the same port."""

from __future__ import annotations

import contextlib
import os
import socket
import threading

import psycopg

CHUNK_BYTES = 65536


class Relay:
    def __init__(self, url: str) -> None:
        info = psycopg.conninfo.conninfo_to_dict(url)
        host = str(info.get("host") or "localhost")
        port = int(info.get("port") or 5432)
        if host.startswith("/"):  # the embedded server listens on a unix socket only
            self._family, self._target = socket.AF_UNIX, os.path.join(host, f".s.PGSQL.{port}")
        else:
            self._family, self._target = socket.AF_INET, (host, port)
        self.accepted = 0  # connections carried so far
        self._lock = threading.Lock()
        self._open: list[socket.socket] = []
        self._server = self._listen(0)
        self.port = int(self._server.getsockname()[1])
        self.url = psycopg.conninfo.make_conninfo(url, host="127.0.0.1", port=str(self.port))

    def cut(self) -> None:
        """Drop every connection and refuse new ones (safe twice)."""
        with self._lock:
            server, self._server = self._server, None
            carried, self._open = self._open, []
        if server is not None:
            _close(server)  # shutdown wakes the accepting thread
        for sock in carried:
            _close(sock)

    def mend(self) -> None:
        """Take connections again, on the same port."""
        with self._lock:
            if self._server is None:
                self._server = self._listen(self.port)

    def _listen(self, port: int) -> socket.socket:
        server = socket.create_server(("127.0.0.1", port))
        threading.Thread(target=self._accept, args=(server,), daemon=True).start()
        return server

    def _accept(self, server: socket.socket) -> None:
        while True:
            try:
                client, _ = server.accept()
            except OSError:
                return  # cut
            upstream = socket.socket(self._family, socket.SOCK_STREAM)
            try:
                upstream.connect(self._target)
            except OSError:
                _close(client)
                continue
            with self._lock:
                self.accepted += 1
                self._open += [client, upstream]
            for src, dst in ((client, upstream), (upstream, client)):
                threading.Thread(target=_pump, args=(src, dst), daemon=True).start()


def _pump(src: socket.socket, dst: socket.socket) -> None:
    with contextlib.suppress(OSError):
        while data := src.recv(CHUNK_BYTES):
            dst.sendall(data)
    _close(src)
    _close(dst)


def _close(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    sock.close()
