"""The board's static files (package data under `hive/board/static`), each served with
a content hash in its URL so a browser may keep it until the hive is upgraded."""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass
from importlib import resources

TYPES = {
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".svg": "image/svg+xml",
}
NAMES = ("board.css", "board.js", "favicon.svg")


@dataclass(frozen=True)
class Asset:
    name: str
    body: bytes
    content_type: str
    etag: str  # quoted, as the header carries it


@functools.cache
def asset(name: str) -> Asset | None:
    """The static file `name`, or None when the board has none by that name."""
    if name not in NAMES:
        return None
    body = (resources.files("hive.board") / "static" / name).read_bytes()
    suffix = name[name.rindex(".") :]
    return Asset(name, body, TYPES[suffix], f'"{hashlib.sha256(body).hexdigest()[:16]}"')


def asset_url(name: str) -> str:
    found = asset(name)
    assert found is not None, name
    return f"/board/static/{name}?v={found.etag.strip(chr(34))}"
