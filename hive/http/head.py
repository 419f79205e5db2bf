"""A request's head (request line and headers), read strictly from the bytes received.

`parse_head(buffer, head_max, body_max)` answers None while the head is not whole yet, a
`Fault` (status and one line) for a head that no answer but an error can follow, or the
`Head`. Only what the hive's routes need is accepted: GET, HEAD and POST, HTTP/1.0 and
1.1, an ASCII target without control characters, a body only by Content-Length (ASCII
digits, one value): a chunked body is refused, not guessed at.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from hive.http.routes import METHODS

_HEAD_END_RE = re.compile(rb"\r?\n\r?\n")
_TOKEN_RE = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_TARGET_RE = re.compile(r"/[\x21-\x7e]*")
_LENGTH_RE = re.compile(r"[0-9]{1,19}")
VERSIONS = frozenset({"HTTP/1.0", "HTTP/1.1"})
HEADERS_MAX = 100


@dataclass(frozen=True)
class Fault:
    status: int
    message: str


@dataclass(frozen=True)
class Head:
    method: str
    target: str
    version: str
    headers: dict[str, str] = field(default_factory=dict)  # names in lower case
    size: int = 0  # bytes of the head, blank line included
    body_length: int = 0
    expect_continue: bool = False


def parse_head(
    buffer: bytes | bytearray, head_max: int, body_max: int | Callable[[str], int]
) -> Head | Fault | None:
    found = _HEAD_END_RE.search(buffer, 0, head_max + 4)
    if found is None:
        if len(buffer) > head_max:
            return Fault(431, f"the request's head is larger than {head_max} bytes")
        return None
    text = bytes(buffer[: found.start()]).decode("latin-1")
    lines = text.replace("\r\n", "\n").split("\n")
    parts = lines[0].split(" ")
    if len(parts) != 3:
        return Fault(400, "the request line is not METHOD TARGET HTTP/1.1")
    method, target, version = parts
    if not _TOKEN_RE.fullmatch(method):
        return Fault(400, "the request line is not METHOD TARGET HTTP/1.1")
    if method not in METHODS:
        return Fault(501, f"{method[:20]} is not served here; use GET, HEAD or POST")
    if version not in VERSIONS:
        return Fault(505, "only HTTP/1.0 and HTTP/1.1 are served")
    if not _TARGET_RE.fullmatch(target):
        return Fault(400, "the target is a path of ASCII characters, control characters none")
    headers: dict[str, str] = {}
    if len(lines) - 1 > HEADERS_MAX:
        return Fault(431, f"more than {HEADERS_MAX} headers")
    for line in lines[1:]:
        name, colon, value = line.partition(":")
        if not colon or not _TOKEN_RE.fullmatch(name):
            return Fault(400, "a header line is not Name: value")
        value = value.strip(" \t")
        if any((ord(c) < 32 and c != "\t") or ord(c) == 127 for c in value):
            return Fault(400, "a header value holds a control character")
        key = name.lower()
        if key in headers and key in ("content-length", "host", "authorization"):
            return Fault(400, f"the {name} header is given twice")
        headers[key] = f"{headers[key]}, {value}" if key in headers else value
    if "transfer-encoding" in headers:
        return Fault(411, "send the body with a Content-Length, not a Transfer-Encoding")
    length_text = headers.get("content-length")
    if length_text is None:  # no body (RFC 9112: neither a length nor an encoding)
        length = 0
    elif not _LENGTH_RE.fullmatch(length_text):
        return Fault(400, "Content-Length is not a whole number in ASCII digits")
    else:
        length = int(length_text)
    cap = body_max(target.split("?", 1)[0]) if callable(body_max) else body_max
    if length > cap:
        return Fault(413, f"body: larger than {cap} bytes")
    expect = headers.get("expect", "").lower() == "100-continue"
    return Head(method, target, version, headers, found.end(), length, expect)
