"""The board's routes (DESIGN 10), all GET and behind the token like the API:

    /                                   302 to /board
    /board[?label=&column=&runner=&q=]  the board (HTML); the filters are the page's
    /board/pulse                        the header's figures (the page fetches them again)
    /board/events[?since=ID]            the board's server-sent events
    /board/events?issue=N               hints for issue N's page
    /board/static/<name>                its stylesheet and script
    /board/issues/<n>                   an issue's page
    /board/issues/<n>/summary           the part of it the page fetches again
    /board/issues/<n>/transcript?after= transcript lines past a cursor

A reconnecting browser sends `Last-Event-ID`, which wins over `since`. HTML answers carry
a content security policy that allows this origin's files only: no inline script, no
other site. A page drawn for a holder of the token carries a fresh CSRF token (its
buttons' writes send it back). With HIVE_BOARD_PUBLIC=on, /board and its static files
answer without the token: the public board (`public`), read-only, no stream.
"""

from __future__ import annotations

import re
import urllib.parse
import uuid
from typing import Protocol

from hive.board.assets import asset
from hive.board.hub import FIRST_BYTES
from hive.board.issue_page import parse_after
from hive.http.csrf import PageTokens
from hive.http.message import Request, Response, error, etag_matches
from hive.http.stream import Opener
from hive.services.issues import issue_number

BOARD_PREFIX = "/board"
_ISSUE = re.compile(r"/board/issues/(?P<issue>[^/]+)(?:/(?P<part>summary|transcript))?")
_EVENT_ID = re.compile(r"[0-9a-f]{1,16}\.[0-9]{1,12}")
HTML = "text/html; charset=utf-8"
SECURITY = (
    (
        "Content-Security-Policy",
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
        "img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    ),
    ("X-Content-Type-Options", "nosniff"),
    ("Referrer-Policy", "no-referrer"),
)
NO_STORE = (("Cache-Control", "no-store"),)
QUERY_FIELDS = ("since", "issue", "after", "label", "column", "runner", "q")
# a file's URL carries its content hash: a browser keeps it for a day, asks again after
STATIC_CACHE = (("Cache-Control", "private, max-age=86400"),)


class BoardSource(Protocol):
    def page(self, csrf: str) -> str: ...

    def public_page(self) -> str: ...

    def pulse(self) -> str: ...

    def issue(self, number: int, csrf: str) -> str: ...

    def summary(self, number: int) -> str: ...

    def transcript(self, number: int, seen: dict[uuid.UUID, int]) -> tuple[str, str]: ...

    def opener(self, *, resume: str | None, issue: int | None) -> Opener: ...

    def close(self) -> None: ...


def is_public(method: str, path: str) -> bool:
    """What HIVE_BOARD_PUBLIC=on serves without the token: the board's page and files."""
    board = path in (BOARD_PREFIX, BOARD_PREFIX + "/") or path.startswith("/board/static/")
    return method in ("GET", "HEAD") and board


class BoardRoutes:
    def __init__(self, board: BoardSource | None, pages: PageTokens) -> None:
        self.board = board
        self.pages = pages

    def public(self, request: Request) -> Response:
        """The public board (a request without the token; `is_public` said yes)."""
        if request.path.startswith("/board/static/"):
            return _static(request, request.path.removeprefix("/board/static/"))
        if self.board is None:
            return error(503, "the board is not served by this process")
        query = _query(request.target)
        if isinstance(query, Response):
            return query
        return _html(self.board.public_page())

    def answer(self, request: Request) -> Response:
        path = request.path
        if path == "/":
            return Response(302, b"", None, (("Location", BOARD_PREFIX),))
        if path.startswith("/board/static/"):
            return _static(request, path.removeprefix("/board/static/"))
        board = self.board
        if board is None:
            return error(503, "the board is not served by this process")
        query = _query(request.target)
        if isinstance(query, Response):
            return query
        if path in (BOARD_PREFIX, BOARD_PREFIX + "/"):
            return _html(board.page(self.pages.make()))
        if path == "/board/pulse":
            return _html(board.pulse())  # the pages' own headers (CSP, nosniff)
        if path == "/board/events":
            return _events(board, request, query)
        found = _ISSUE.fullmatch(path)
        if found is None:
            return error(404, "no such page of the board")
        number = issue_number(found["issue"])
        part = found["part"]
        if part is None:
            return _html(board.issue(number, self.pages.make()))
        if part == "summary":
            return _html(board.summary(number))
        try:
            seen = parse_after(query.get("after", ""))
        except ValueError as err:
            return error(400, str(err))
        lines, after = board.transcript(number, seen)
        headers = (*NO_STORE, *SECURITY, ("X-Hive-After", after))
        return Response(200, lines.encode(), HTML, headers)

    def close(self) -> None:
        if self.board is not None:
            self.board.close()


def _html(text: str) -> Response:
    return Response(200, text.encode(), HTML, (*NO_STORE, *SECURITY))


def _events(board: BoardSource, request: Request, query: dict[str, str]) -> Response:
    issue = None
    if "issue" in query:
        issue = issue_number(query["issue"])
    resume = request.headers.get("last-event-id") or query.get("since") or None
    if resume is not None and not _EVENT_ID.fullmatch(resume):
        resume = None  # not one of ours (another process's epoch, say): a snapshot
    opener = board.opener(resume=resume, issue=issue)
    headers = (*NO_STORE, ("X-Accel-Buffering", "no"))
    return Response(200, FIRST_BYTES, "text/event-stream; charset=utf-8", headers, stream=opener)


def _static(request: Request, name: str) -> Response:
    found = asset(name)
    if found is None:
        return error(404, "no such file of the board")
    headers = (("ETag", found.etag), *STATIC_CACHE, ("X-Content-Type-Options", "nosniff"))
    if etag_matches(request.headers.get("if-none-match"), found.etag):
        return Response(304, b"", None, headers)
    return Response(200, found.body, found.content_type, headers)


def _query(target: str) -> dict[str, str] | Response:
    """The query string's fields (each at most once), or a 400 naming the bad one."""
    raw = target.partition("?")[2]
    try:
        pairs = urllib.parse.parse_qsl(raw, strict_parsing=bool(raw), max_num_fields=8)
    except ValueError:
        return error(400, "the query string is not name=value&...")
    found: dict[str, str] = {}
    for name, value in pairs:
        if name not in QUERY_FIELDS:
            known = ", ".join(QUERY_FIELDS)
            return error(400, f"unknown query field {name[:40]!r}; known: {known}")
        if name in found:
            return error(400, f"the query field {name} is given twice")
        found[name] = value
    return found
