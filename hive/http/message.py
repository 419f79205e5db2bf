"""An HTTP request read whole and the answer to it, as the routes and the loop pass them."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from hive.http.stream import Opener

_REASONS = {
    200: "OK", 201: "Created", 202: "Accepted", 204: "No Content", 302: "Found",
    304: "Not Modified", 400: "Bad Request",
    401: "Unauthorized", 404: "Not Found", 405: "Method Not Allowed", 408: "Request Timeout",
    409: "Conflict", 411: "Length Required", 413: "Content Too Large",
    431: "Request Header Fields Too Large", 500: "Internal Server Error",
    501: "Not Implemented", 503: "Service Unavailable", 505: "HTTP Version Not Supported",
}  # fmt: skip


@dataclass(frozen=True)
class Request:
    """One request, read whole: header names in lower case."""

    method: str
    target: str  # as sent: the path and any query string
    headers: Mapping[str, str] = field(default_factory=dict)
    body: bytes = b""
    client: str = "-"

    @property
    def path(self) -> str:
        return self.target.split("?", 1)[0]


@dataclass(frozen=True)
class Response:
    """A whole answer, or with `stream` the start of a long-lived one: the transport
    sends the head and `body`, then calls `stream(sink)` once and writes whatever is sent
    to the sink until one side closes (see `hive.http.stream`)."""

    status: int
    body: bytes = b""
    content_type: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    stream: Opener | None = None

    def head(self, version: str = "HTTP/1.1") -> bytes:
        """The status line and headers, ending with the blank line; the connection closes
        after every answer (a stream's body runs until then: it has no length)."""
        lines = [f"{version} {self.status} {reason(self.status)}"]
        if self.content_type:
            lines.append(f"Content-Type: {self.content_type}")
        lines += [f"{name}: {value}" for name, value in self.headers]
        if self.stream is None:
            lines.append(f"Content-Length: {len(self.body)}")
        lines += ["Connection: close", "", ""]
        return "\r\n".join(lines).encode("latin-1")


def reason(status: int) -> str:
    return _REASONS.get(status, "Error")


def json_response(status: int, value: Any, headers: Mapping[str, str] | None = None) -> Response:
    body = json.dumps(value, default=str).encode() + b"\n"
    return Response(status, body, "application/json", tuple((headers or {}).items()))


def error(status: int, message: str, headers: Mapping[str, str] | None = None) -> Response:
    return json_response(status, {"error": message}, headers)


def etag_matches(if_none_match: str | None, etag: str) -> bool:
    """Whether an If-None-Match header names `etag` (or is `*`)."""
    if not if_none_match:
        return False
    if if_none_match.strip() == "*":
        return True
    return any(tag.strip().removeprefix("W/") == etag for tag in if_none_match.split(","))
