"""The routes: a whole request in, a whole response out, no socket in sight.

`Routes.answer(request)` is what every transport calls once it holds a request with its
whole body; it never raises. Every failure is an answer: a use case's refusal carries its
status, the store unreachable is 503, and only a fault of the hive's own is a 500 (with
the traceback in the log). `HEAD` is routed as `GET`; the transport sends the head only.
"""

from __future__ import annotations

import base64
import binascii
import functools
import hashlib
import hmac
import json
import logging
import re
from collections.abc import Callable
from urllib.parse import unquote

import psycopg
from prometheus_client.exposition import choose_encoder

from hive.errors import HiveError
from hive.forge.github.hooks import BODY_MAX_BYTES as HOOK_BODY_MAX_BYTES
from hive.http.board_routes import BOARD_PREFIX, BoardRoutes, is_public
from hive.http.coalesce import Coalesced
from hive.http.csrf import HEADER as CSRF_HEADER
from hive.http.csrf import PageTokens
from hive.http.message import Request, Response, error, etag_matches, json_response, reason
from hive.http.surface import Surface
from hive.rules.board import ACTIONS, Action
from hive.rules.browser_writes import Credential, write_refusal
from hive.rules.text import shown
from hive.services import credits, issues
from hive.services.errors import BadRequest, ServiceError
from hive.services.export import bundle_name

# the request and answer types live in hive.http.message; they are named here too
__all__ = ["Request", "Response", "Routes", "error", "json_response", "reason"]

log = logging.getLogger("hive.http")

# Probes and scrapes arrive every few seconds; their access lines would drown the rest.
QUIET_PATHS = frozenset({"/healthz", "/readyz", "/metrics"})
# GitHub's webhook: GitHub sends no bearer token, the body's signature is its
# authentication (hive.forge.github.hooks checks it before reading anything)
HOOK_PATH = "/hooks/github"
# answered without the token: probes and scrapers carry none, nor does GitHub
OPEN_PATHS = QUIET_PATHS | {HOOK_PATH}
PATH_SHOWN_MAX_CHARS = 200
# a listing or a scrape that began this long before a call answers it too (coalesce.py)
MOMENT_SECONDS = 0.1
METHODS = frozenset({"GET", "HEAD", "POST"})
# GET /api/issues/<n>; POST /api/issues/<n>/<action> (DESIGN 10 and 11)
ISSUE_PATH = re.compile(rf"/api/issues/(?P<issue>[^/]+)(?:/(?P<action>{'|'.join(ACTIONS)}))?")
# GET /api/credits/<account> (DESIGN 11)
CREDIT_PATH = re.compile(r"/api/credits/(?P<account>[^/]+)")
# what a scraper's Accept may ask for: OpenMetrics, or else Prometheus' text format
_OPENMETRICS = "application/openmetrics-text"
_ENCODINGS = (_OPENMETRICS, "")


class Routes:
    """The hive's routes over `surface`, behind `api_token` when one is set; with
    `board_public`, the board's page (read-only, its cards' numbers, titles and ages)
    is served without it too."""

    def __init__(
        self,
        surface: Surface,
        api_token: str | None,
        body_max_bytes: int,
        *,
        board_public: bool = False,
    ) -> None:
        self.surface = surface
        self._token = api_token
        self.body_max_bytes = body_max_bytes
        self.board_public = board_public
        self.pages = PageTokens(api_token)
        # a store query and an encoding each: many clients at once share one
        self._orders_listing = Coalesced(self._list_orders, MOMENT_SECONDS)
        self._board = BoardRoutes(surface.board, self.pages)
        self._metrics_text = {
            kind: Coalesced(functools.partial(self._encode_metrics, kind), MOMENT_SECONDS)
            for kind in _ENCODINGS
        }

    def body_max_for(self, path: str) -> int:
        """The largest body `path` takes: GitHub's deliveries are up to 25 MB (where the
        webhook is on), every other route's at most `body_max_bytes`."""
        if path == HOOK_PATH and self.surface.github_hook is not None:
            return max(HOOK_BODY_MAX_BYTES, self.body_max_bytes)
        return self.body_max_bytes

    def answer(self, request: Request) -> Response:
        """The response to `request`; never raises (see the module)."""
        method, path = request.method, request.path
        try:
            if path not in OPEN_PATHS:
                credential = self._credential(request)
                if credential is None:
                    if self.board_public and is_public(method, path):
                        return self._board.public(request)
                    return self._unauthorized(request)
                if method == "POST":
                    refused = self._write_refusal(request, credential)
                    if refused is not None:
                        return error(403, refused)
            route = self._route(path)
            if route is None:
                return error(404, f"no route {shown(path[:PATH_SHOWN_MAX_CHARS])}")
            allowed, answer = route
            asked = "GET" if method == "HEAD" else method
            if asked != allowed:
                allow = "GET, HEAD" if allowed == "GET" else allowed
                return error(405, f"{method} is not allowed here; use {allow}", {"Allow": allow})
            response = answer(request)
        except ServiceError as err:  # a use case's refusal carries its status
            return error(err.status, str(err))
        except psycopg.OperationalError as err:
            log.warning("%s %s: the store is unreachable: %s", method, self.shown(path), _last(err))
            return error(503, "the store is unreachable; try again")
        except HiveError as err:  # a git or store problem the operator can read and act on
            log.error("%s %s: %s", method, self.shown(path), err)
            return error(500, str(err))
        except Exception:
            log.exception("%s %s failed", method, self.shown(path))
            return error(500, "internal error; the server's log has the cause")
        return response

    def shown(self, text: str) -> str:
        """`text` as a log line may show it: escaped, cut, and without the token (a
        client that puts the token in its path must not get it into the log)."""
        text = shown(text[:PATH_SHOWN_MAX_CHARS])
        return text.replace(self._token, "<token>") if self._token else text

    def quiet(self, request: Request, status: int) -> bool:
        return request.path in QUIET_PATHS and status == 200

    def close(self) -> None:
        """Stop what the routes started (the board's listener); safe twice."""
        self._board.close()

    # ---- routing ---------------------------------------------------------------------

    def _route(self, path: str) -> tuple[str, Callable[[Request], Response]] | None:
        fixed: dict[str, tuple[str, Callable[[Request], Response]]] = {
            "/healthz": ("GET", lambda r: json_response(200, {"alive": True})),
            "/readyz": ("GET", lambda r: self._readyz()),
            "/metrics": ("GET", self._metrics),
            "/queen/export": ("GET", lambda r: self._branches()),
            "/api/orders": ("GET", lambda r: self._orders()),
            "/api/issues": ("POST", self._add_issue),
            HOOK_PATH: ("POST", self._github_hook),
        }
        if path in fixed:
            return fixed[path]
        if path == "/" or path == BOARD_PREFIX or path.startswith(BOARD_PREFIX + "/"):
            return "GET", self._board.answer
        if path.startswith("/queen/export/"):
            issue = path.removeprefix("/queen/export/")
            return "GET", lambda r: self._bundle(r, issue)
        credit = CREDIT_PATH.fullmatch(path)
        if credit is not None:
            return "GET", lambda r: self._credit(credit["account"])
        about = ISSUE_PATH.fullmatch(path)
        if about is not None:
            text, action = about["issue"], about["action"]
            if action is None:
                return "GET", lambda r: self._issue(text)
            return "POST", lambda r: self._issue_action(action, text, r)
        return None

    def _credential(self, request: Request) -> Credential | None:
        """How the request carries the token: as a bearer token, or as the password of
        HTTP Basic auth, any user name (a browser sends that after a 401 asks for it);
        NONE when the hive has no token; None when it carries no right one."""
        if not self._token:
            return Credential.NONE
        given = request.headers.get("authorization", "")
        scheme, _, credentials = given.partition(" ")
        if scheme.lower() == "basic":
            try:
                decoded = base64.b64decode(credentials.strip(), validate=True)
            except (binascii.Error, ValueError):
                return None
            password = decoded.partition(b":")[2]
            return Credential.BASIC if _same(password, self._token.encode()) else None
        wanted = f"Bearer {self._token}".encode()
        given_bytes = given.encode("utf-8", "surrogateescape")
        return Credential.BEARER if _same(given_bytes, wanted) else None

    def _write_refusal(self, request: Request, credential: Credential) -> str | None:
        """Why a write is refused (a browser's credentials ride on any site's form post:
        it must come from this origin with the page's CSRF token), or None."""
        headers = request.headers
        return write_refusal(
            credential,
            origin=headers.get("origin"),
            host=headers.get("host"),
            fetch_site=headers.get("sec-fetch-site"),
            page_token_valid=self.pages.valid(headers.get(CSRF_HEADER)),
        )

    def _unauthorized(self, request: Request) -> Response:
        """401, asking for the token as a bearer token or a Basic password (the board's
        pages ask for Basic first: a browser then asks its person)."""
        bearer = ("WWW-Authenticate", 'Bearer realm="hive"')
        basic = ("WWW-Authenticate", 'Basic realm="hive", charset="UTF-8"')
        if request.path == "/" or request.path.startswith(BOARD_PREFIX):
            challenges: tuple[tuple[str, str], ...] = (basic, bearer)
            message = "the board needs the API token: give it as the password (any user name)"
        else:
            # a write too: a browser answers with the Basic credentials it holds for the
            # realm (a board page's button), and the write then needs the page's CSRF token
            challenges = (bearer, basic)
            message = "missing or wrong token (Authorization: Bearer, or Basic with it as password)"
        answer = error(401, message)
        return Response(401, answer.body, answer.content_type, challenges)

    # ---- routes ----------------------------------------------------------------------

    def _readyz(self) -> Response:
        reasons = []
        if _asks(self.surface.draining, "draining", default=True):
            reasons.append("draining")
        if not _asks(self.surface.store_reachable, "store_reachable", default=False):
            reasons.append("store unreachable")
        if reasons:
            return json_response(503, {"ready": False, "error": ", ".join(reasons)})
        return json_response(200, {"ready": True})

    def _metrics(self, request: Request) -> Response:
        accept = request.headers.get("accept", "")
        kind = _OPENMETRICS if _OPENMETRICS in accept else ""
        return self._metrics_text[kind]()

    def _encode_metrics(self, accept: str) -> Response:
        encoder, content_type = choose_encoder(accept)
        return Response(200, encoder(self.surface.registry), content_type)

    def _branches(self) -> Response:
        if self.surface.exports is None:
            return error(503, "exports are not served by this process")
        return json_response(200, self.surface.exports.branches())

    def _bundle(self, request: Request, text: str) -> Response:
        issue = issues.issue_number(text)
        if self.surface.exports is None:
            return error(503, "exports are not served by this process")
        ref = self.surface.exports.find(issue)
        etag = f'"{ref.head_sha}"'
        headers = {"ETag": etag, "X-Hive-Bundle-Source": ref.source}
        if etag_matches(request.headers.get("if-none-match"), etag):
            return Response(304, b"", None, tuple(headers.items()))
        headers["Content-Disposition"] = f'attachment; filename="{bundle_name(issue)}"'
        return Response(200, ref.read(), "application/octet-stream", tuple(headers.items()))

    def _orders(self) -> Response:
        if self.surface.orders is None:
            return error(503, "orders are not served by this process")
        return self._orders_listing()

    def _list_orders(self) -> Response:
        assert self.surface.orders is not None
        return json_response(200, self.surface.orders())

    def _add_issue(self, request: Request) -> Response:
        if self.surface.add_issue is None:
            return error(503, "issues are not accepted by this process")
        number = self.surface.add_issue(issues.from_json(_json_body(request.body)))
        return json_response(201, {"number": number}, {"Location": f"/api/issues/{number}"})

    def _github_hook(self, request: Request) -> Response:
        if self.surface.github_hook is None:
            return error(
                404, "no GitHub webhook here: HIVE_FORGE=github with HIVE_GITHUB_WEBHOOK_SECRET"
            )
        answer = self.surface.github_hook(request.headers, request.body)
        if answer.status == 204:
            return Response(204)
        return json_response(answer.status, dict(answer.body))

    def _issue(self, text: str) -> Response:
        number = issues.issue_number(text)
        if self.surface.issue is None:
            return error(503, "issues are not served by this process")
        return json_response(200, self.surface.issue(number))

    def _credit(self, text: str) -> Response:
        account = credits.account_name(unquote(text))
        if self.surface.credit is None:
            return error(503, "credits are not served by this process")
        return json_response(200, self.surface.credit(account))

    def _issue_action(self, name: str, text: str, request: Request) -> Response:
        # a body, if any, was read whole by the transport; only reject reads it (its note)
        number = issues.issue_number(text)
        s = self.surface
        action = Action(name)  # the path's pattern admits only the actions
        if action is Action.REJECT:
            if s.reject is None:
                return error(503, "reject is not served by this process")
            return json_response(200, s.reject(number, _note(request.body)))
        act = {
            Action.APPROVE: s.approve,
            Action.CANCEL: s.cancel_order,
            Action.CLOSE: s.close_issue,
            Action.REOPEN: s.reopen,
        }[action]
        if act is None:
            return error(503, f"{action} is not served by this process")
        return json_response(200, act(number))


def _json_body(body: bytes) -> object:
    """The request's body as JSON; BadRequest (400) naming what is wrong."""
    try:
        return json.loads(body)
    except RecursionError:
        raise BadRequest("body: JSON nested too deeply") from None
    except (UnicodeDecodeError, ValueError) as err:  # ValueError: a 5000-digit number
        # the part before a ';' (Python's own advice to raise its digit limit is no
        # help to a client)
        reason = str(err).split(";", 1)[0]
        raise BadRequest(f"body: not JSON ({shown(reason)[:200]})") from None


def _note(body: bytes) -> str:
    """A rejection's note: the body {"note": "..."}."""
    data = _json_body(body) if body.strip() else None
    note = data.get("note") if isinstance(data, dict) else None
    if not isinstance(note, str):
        raise BadRequest('body: give {"note": "what is wrong"} (the next attempt\'s brief)')
    return note


def _same(given: bytes, wanted: bytes) -> bool:
    # digests of equal length: the comparison's time tells nothing, not even the length
    return hmac.compare_digest(hashlib.sha256(given).digest(), hashlib.sha256(wanted).digest())


def _asks(question: Callable[[], bool], name: str, default: bool) -> bool:
    try:
        return bool(question())
    except Exception:
        log.exception("readiness: %s raised", name)
        return default


def _last(err: Exception) -> str:
    text = str(err).strip()
    return text.splitlines()[-1] if text else type(err).__name__
