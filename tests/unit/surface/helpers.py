"""A tiny HTTP client over loopback for the surface's tests."""

from __future__ import annotations

import http.client
import json
from dataclasses import dataclass
from typing import Any

from hive.http import ExportServer, HttpConfig, Surface


@dataclass
class Answer:
    status: int
    headers: http.client.HTTPMessage
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


def call(
    server: ExportServer,
    method: str,
    path: str,
    body: bytes | None = None,
    headers: dict[str, str] | None = None,
) -> Answer:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        response = conn.getresponse()
        return Answer(response.status, response.headers, response.read())
    finally:
        conn.close()


def call_once(
    surface: Surface,
    method: str,
    path: str,
    *,
    config: HttpConfig | None = None,
    headers: dict[str, str] | None = None,
) -> Answer:
    """Serve `surface` (by default on a free loopback port), make one call, stop."""
    server = ExportServer(config or HttpConfig(port=0), surface)
    server.start()
    try:
        return call(server, method, path, headers=headers)
    finally:
        server.stop()


def post_json(server: ExportServer, path: str, value: Any, token: str | None = None) -> Answer:
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    return call(server, "POST", path, json.dumps(value).encode(), headers)


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}
