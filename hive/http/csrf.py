"""The board's per-page CSRF token: a page drawn for a person carries a fresh one, and a
write that a browser's Basic credentials carry must send it back (X-Hive-CSRF).

A token is `<nonce>.<issued unix seconds>.<mac>`, the mac an HMAC-SHA256 over the first
two parts under a key drawn from the API token: any Queen behind one Service checks the
page another drew, and no one without the token can make one. A token is good for
TOKEN_MAX_SECONDS; a page open longer asks for a reload.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from collections.abc import Callable

HEADER = "x-hive-csrf"
TOKEN_MAX_SECONDS = 12 * 3600
TOKEN_MAX_CHARS = 200
_PURPOSE = b"hive board csrf v1"


class PageTokens:
    """Makes and checks page tokens under `secret` (the API token; None: a key of this
    process's own, for a hive with no token)."""

    def __init__(self, secret: str | None, clock: Callable[[], float] = time.time) -> None:
        base = secret.encode() if secret else secrets.token_bytes(32)
        self._key = hmac.new(base, _PURPOSE, hashlib.sha256).digest()
        self.clock = clock

    def make(self) -> str:
        body = f"{secrets.token_hex(16)}.{int(self.clock())}"
        return f"{body}.{self._mac(body)}"

    def valid(self, token: str | None) -> bool:
        if not token or len(token) > TOKEN_MAX_CHARS:
            return False
        body, _, mac = token.strip().rpartition(".")
        issued = body.rpartition(".")[2]
        if not (issued.isascii() and issued.isdigit()):
            return False
        given = mac.encode("utf-8", "surrogateescape")
        if not hmac.compare_digest(given, self._mac(body).encode()):
            return False
        return 0 <= self.clock() - int(issued) <= TOKEN_MAX_SECONDS

    def _mac(self, body: str) -> str:
        data = body.encode("utf-8", "surrogateescape")
        return hmac.new(self._key, data, hashlib.sha256).hexdigest()
