"""A small client of GitHub's REST API with GitHub's manners (DESIGN 10).

Every request carries a User-Agent and the token in its Authorization header, nowhere
else: no URL, log line or error message holds it. A response that asks for a pause (a
primary or secondary rate limit, a 5xx) is waited out and sent again, as
`hive.rules.forge_limits` decides; a list is followed through its Link pages; a GET may be
conditional (`If-None-Match`), and a 304 costs no rate limit. A refusal for a missing
permission raises PermissionMissing naming the permission; any other error GitHubError.
Given `metrics`, each request is counted by method and status class, each pause by its
reason, and the rate limit left is kept from the answers' X-RateLimit-Remaining.

One client serves a whole process (the publish jobs side by side, the poll): its
requests go on the wire one at a time, as GitHub asks ("make requests serially instead
of concurrently"), and a rate limit one of them met holds them all.
"""

from __future__ import annotations

import json
import logging
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode, urlsplit

from hive.errors import HiveError
from hive.metrics import GitHubMetrics
from hive.rules.forge_limits import (
    header,
    holds_every_request,
    missing_permission,
    next_link,
    pace_seconds,
    wait_after,
)

log = logging.getLogger("hive.forge")

USER_AGENT = "hive-forge (+https://github.com/)"
API_VERSION = "2022-11-28"
TIMEOUT_SECONDS = 30.0
MAX_PAGES = 100  # a listing longer than this many pages is cut (100 x 100 items)
PER_PAGE = 100


class GitHubError(HiveError):
    """GitHub answered with an error (`status`, GitHub's `message`) or could not be
    reached (status 0). The text never holds the token."""

    def __init__(self, status: int, message: str, what: str) -> None:
        self.status = status
        self.message = message
        super().__init__(f"GitHub {what}: {status or 'unreachable'} {message}".rstrip())


class PermissionMissing(GitHubError):
    """The token lacks a permission the request needs; the text names it."""


@dataclass(frozen=True)
class Response:
    status: int
    headers: Mapping[str, str]
    data: Any

    @property
    def etag(self) -> str | None:
        return header(self.headers, "etag")


@dataclass
class Counts:
    """What the client sent: requests, how many cost rate limit (not a 304), pauses."""

    requests: int = 0
    not_modified: int = 0
    pauses: list[tuple[str, float]] = field(default_factory=list)

    @property
    def costed(self) -> int:
        return self.requests - self.not_modified


class GitHubClient:
    """Requests to `api_url` (https://api.github.com, or a GitHub Enterprise / test
    server's `.../api/v3`) with `token`. `sleep` and `clock` are injectable for tests;
    `metrics` (None: nothing is counted) gets every request, pause and rate limit seen."""

    def __init__(
        self,
        api_url: str,
        token: str,
        *,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.time,
        timeout_seconds: float = TIMEOUT_SECONDS,
        metrics: GitHubMetrics | None = None,
    ) -> None:
        self.api_url = api_url.rstrip("/")
        self._token = token
        self._sleep = sleep
        self._clock = clock
        self._timeout = timeout_seconds
        self._metrics = metrics
        self._lock = threading.Lock()
        # one request on the wire at a time (GitHub: "make requests serially instead of
        # concurrently"); a pause between tries is waited outside it
        self._wire = threading.Lock()
        self._hold_until = 0.0
        self.counts = Counts()

    def __repr__(self) -> str:
        return f"GitHubClient({self.api_url!r})"  # never the token

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        params: Mapping[str, Any] | None = None,
        etag: str | None = None,
        what: str | None = None,
    ) -> Response:
        """Send one request (waiting out limits); the response of a 2xx or a 304.
        `path` is below the API URL (`/repos/o/r/issues`) or a full URL of it (a Link)."""
        url = path if path.startswith(("http://", "https://")) else self.api_url + path
        if params:
            url += ("&" if "?" in url else "?") + urlencode(params)
        shown = what or f"{method} {urlsplit(url).path}"
        tries = 0
        while True:
            tries += 1
            self._pace()
            try:
                with self._wire:
                    status, headers, data = self._send(method, url, body, etag, shown)
            except GitHubError:
                self._observe(method, 0, {})
                raise
            self._observe(method, status, headers)
            with self._lock:
                self.counts.requests += 1
                if status == 304:
                    self.counts.not_modified += 1
            if status == 304 or 200 <= status < 300:
                self._hold(pace_seconds(headers, now_epoch=self._clock()))
                return Response(status, headers, data)
            message = _message(data)
            wait = wait_after(status, headers, message, now_epoch=self._clock(), tries=tries)
            if wait is not None and holds_every_request(wait.why):
                # the publish jobs' threads, the poll and the webhooks share one token
                self._hold(wait.seconds)
            if wait is None or wait.give_up:
                lacking = missing_permission(status, headers, message)
                if lacking is not None:
                    raise PermissionMissing(status, lacking, shown)
                raise GitHubError(status, message, shown)
            log.warning("GitHub %s: %s, sending again in %.0f s", shown, wait.why, wait.seconds)
            with self._lock:
                self.counts.pauses.append((str(wait.why), wait.seconds))
            if self._metrics is not None:
                self._metrics.retried(wait.why)
            self._sleep(wait.seconds)

    def get_all(
        self, path: str, params: Mapping[str, Any] | None = None, *, etag: str | None = None
    ) -> Response:
        """Every item of a listing, its Link pages followed. A first page answered 304
        (`etag` matched) returns that 304 with no data and costs nothing more."""
        first = self.request(
            "GET", path, params={"per_page": PER_PAGE, **(params or {})}, etag=etag
        )
        if first.status == 304:
            return first
        items = list(first.data or [])
        link = header(first.headers, "link")
        for _ in range(MAX_PAGES - 1):
            nxt = next_link(link)
            if nxt is None or not nxt.startswith(self.api_url):
                break  # a Link to anywhere else is not followed (the token goes nowhere else)
            page = self.request("GET", nxt, what=f"GET {urlsplit(path).path} (next page)")
            items += list(page.data or [])
            link = header(page.headers, "link")
        return Response(first.status, first.headers, items)

    # ---- the wire -----------------------------------------------------------------

    def _observe(self, method: str, status: int, headers: Mapping[str, str]) -> None:
        if self._metrics is not None:
            self._metrics.answered(method, status, _remaining(headers))

    def _pace(self) -> None:
        with self._lock:
            wait = self._hold_until - self._clock()
        if wait > 0:
            self._sleep(wait)

    def _hold(self, seconds: float) -> None:
        if seconds > 0:
            with self._lock:
                self._hold_until = max(self._hold_until, self._clock() + seconds)

    def _send(
        self, method: str, url: str, body: Any, etag: str | None, shown: str
    ) -> tuple[int, dict[str, str], Any]:
        headers = {
            "Accept": "application/vnd.github+json",
            "User-Agent": USER_AGENT,
            "X-GitHub-Api-Version": API_VERSION,
            "Authorization": f"Bearer {self._token}",
        }
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        if etag:
            headers["If-None-Match"] = etag
        req = urllib.request.Request(url, data=data, method=method, headers=headers)
        try:
            with _OPENER.open(req, timeout=self._timeout) as resp:
                return resp.status, dict(resp.headers.items()), _json(resp.read())
        except urllib.error.HTTPError as err:
            with err:
                return err.code, dict(err.headers.items()), _json(err.read())
        except (OSError, ValueError) as err:
            # nothing of the request (its Authorization header) is in an OSError's text
            raise GitHubError(0, type(err).__name__ + ": " + str(err)[:200], shown) from None


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """A redirect is answered as it is: urllib would resend the Authorization header to
    wherever it points."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


_OPENER = urllib.request.build_opener(_NoRedirect())


def _json(raw: bytes) -> Any:
    if not raw:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return {"message": raw[:200].decode("utf-8", "replace")}


def _remaining(headers: Mapping[str, str]) -> float | None:
    """X-RateLimit-Remaining as a number, or None when absent or not a count."""
    text = header(headers, "x-ratelimit-remaining")
    if text is None:
        return None
    try:
        value = float(text)
    except ValueError:
        return None
    return value if 0 <= value < float("inf") else None  # NaN, negative, inf: no count


def _message(data: Any) -> str:
    if isinstance(data, Mapping):
        return str(data.get("message", ""))[:300]
    return ""
