"""Which writes a browser may make (DESIGN 11, the board you act from).

A browser sends its cached Basic credentials with any request to the hive, a form post
from another site included. So a write carried by Basic credentials, or by no
credentials at all when the hive has no token, must come from the hive's own origin and
carry the page's CSRF token (`hive.http.csrf`). A bearer token is never sent by a
browser on its own: a write carrying one needs neither. A request with no Origin and no
Sec-Fetch-Site header did not come from a browser's page (curl, a script).

`write_refusal` answers None (the write goes on) or the one line a 403 says.
"""

from __future__ import annotations

from enum import Enum
from urllib.parse import urlsplit


class Credential(Enum):
    BEARER = "bearer"  # Authorization: Bearer <the token>
    BASIC = "basic"  # a browser's Basic credentials with the token as password
    NONE = "none"  # the hive has no token: nothing to give


# the Sec-Fetch-Site a browser sends for a request its own page made
SAME_ORIGIN = "same-origin"
CROSS_SITE = "a write from another site is refused (the Origin is not this board's)"
NO_ORIGIN = "a browser's write must carry its Origin; use the board's buttons or a bearer token"
NO_TOKEN = "the page's CSRF token is missing or stale: reload the board and try again"


def origin_host(origin: str) -> str | None:
    """The host[:port] an Origin header names, lowercased; None for `null` or junk."""
    parts = urlsplit(origin.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc or parts.path not in ("", "/"):
        return None
    return parts.netloc.lower()


def write_refusal(
    credential: Credential,
    *,
    origin: str | None,
    host: str | None,
    fetch_site: str | None,
    page_token_valid: bool,
) -> str | None:
    """None when the write may go on, else why it is refused. `origin`, `host` and
    `fetch_site` are the request's Origin, Host and Sec-Fetch-Site headers (None when
    absent); `page_token_valid` says whether it carried a valid CSRF token."""
    if credential is Credential.BEARER:
        return None
    from_browser = origin is not None or fetch_site is not None
    if credential is Credential.NONE and not from_browser:
        return None
    if fetch_site is not None and fetch_site.strip().lower() != SAME_ORIGIN:
        return CROSS_SITE
    if origin is None:
        return NO_ORIGIN
    if host is None or origin_host(origin) != host.strip().lower():
        return CROSS_SITE
    if not page_token_valid:
        return NO_TOKEN
    return None
