"""For any request, every route answers a clear error or success: never a 500, never a
traceback in the log (issue 14). The routes are called directly, the head parser on any
bytes, and the whole server over loopback."""

from __future__ import annotations

import json
import logging
import socket
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hive.http import ExportServer, HttpConfig, Surface
from hive.http.head import Fault, Head, parse_head
from hive.http.routes import Request, Routes
from hive.metrics import HiveMetrics
from hive.services.errors import Conflict, NotFound
from hive.services.export import BundleRef
from hive.store.issues import NewIssue

TOKEN = "prop-token-0123456789"
PATHS = [
    "/healthz",
    "/readyz",
    "/metrics",
    "/queen/export",
    "/queen/export/1",
    "/api/orders",
    "/api/issues",
    "/api/issues/1",
    "/api/issues/2/approve",
    "/api/issues/3/close",
    "/api/issues/x/close",
    "/hooks/github",
    "/",
    "/board",
    "/board/issues/1",
    "/board/static/board.css",
    "/nowhere",
]
FIELDS = ["title", "body", "labels", "boundary", "criteria", "extra"]


class Exports:
    def branches(self) -> list[dict[str, object]]:
        return [{"issue": 1, "branch": "queen-1"}]

    def find(self, issue: int) -> BundleRef:
        raise NotFound(f"issue {issue}: nothing known")


def store_like(issue: NewIssue) -> int:
    """What PostgreSQL refuses, refused the way psycopg would: a NUL, a lone surrogate."""
    for text in (issue.title, issue.body, *issue.labels, *issue.boundary, *issue.criteria):
        assert "\x00" not in text, "PostgreSQL stores no NUL"
        text.encode("utf-8")
    return 7


class Faults(logging.Handler):
    """Collects what the hive's HTTP log says at ERROR or with a traceback."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.found: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.levelno >= logging.ERROR or record.exc_info:
            self.found.append(record.getMessage())

    def __enter__(self) -> Faults:
        logging.getLogger("hive.http").addHandler(self)
        return self

    def __exit__(self, *exc: object) -> None:
        logging.getLogger("hive.http").removeHandler(self)


def issue_detail(number: int) -> dict[str, object]:
    if number > 1:
        raise NotFound(f"no issue #{number}")
    return {"number": number, "title": "t"}


def approve(number: int) -> dict[str, object]:
    raise Conflict(f"issue #{number} has no accepted work to approve")


def surface() -> Surface:
    return Surface(
        registry=HiveMetrics().registry,
        exports=Exports(),  # type: ignore[arg-type]
        orders=lambda: [{"issue": 1}],
        add_issue=store_like,
        issue=issue_detail,
        approve=approve,
        close_issue=lambda number: {"number": number, "state": "closed"},
    )


# any text, lone surrogates too (JSON's "\ud800" decodes to one; st.text() draws none)
texts = st.lists(
    st.characters() | st.integers(0xD800, 0xDFFF).map(chr) | st.sampled_from("\x00\x1b\r\u202e"),
    max_size=20,
).map("".join)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | texts,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(texts, inner, max_size=4),
    max_leaves=12,
)
issue_bodies = st.dictionaries(
    st.sampled_from(FIELDS),
    texts | st.lists(texts, max_size=4) | json_values,
    max_size=5,
)
bodies = st.one_of(
    issue_bodies.map(lambda d: json.dumps(d).encode()),
    json_values.map(lambda v: json.dumps(v).encode()),
    st.binary(max_size=200),
)
headers = st.dictionaries(
    st.sampled_from(["authorization", "accept", "if-none-match", "content-type", "x-any"]),
    st.text(max_size=40) | st.just(f"Bearer {TOKEN}"),
    max_size=4,
)
requests = st.builds(
    Request,
    method=st.sampled_from(["GET", "HEAD", "POST"]),
    target=st.one_of(st.sampled_from(PATHS), st.text().map(lambda t: "/" + t)),
    headers=headers,
    body=bodies,
)


@settings(max_examples=400, deadline=None)
@given(request=requests, token=st.sampled_from([None, TOKEN]))
def test_any_request_to_the_routes_is_answered_without_a_500(request, token):
    with Faults() as faults:
        response = Routes(surface(), token, 64 * 1024).answer(request)
    assert response.status in {200, 201, 302, 304, 400, 401, 404, 405, 409, 503}, response.body
    if response.content_type == "application/json":
        json.loads(response.body)
    assert faults.found == []


@settings(max_examples=400, deadline=None)
@given(issue=issue_bodies)
def test_any_issue_body_is_201_or_a_400_naming_a_field(issue):
    response = Routes(surface(), None, 64 * 1024).answer(
        Request("POST", "/api/issues", {}, json.dumps(issue).encode())
    )
    assert response.status in (201, 400)
    if response.status == 400:
        message = json.loads(response.body)["error"]
        assert message.split(":")[0].split("[")[0] in (*FIELDS, "body", "title")
        assert "\n" not in message and "\x1b" not in message


@given(data=st.binary(max_size=400), head_max=st.integers(1, 500))
def test_the_head_parser_answers_any_bytes_without_raising(data, head_max):
    found = parse_head(data, head_max, 1000)
    assert found is None or isinstance(found, Fault | Head)
    if isinstance(found, Fault):
        assert 400 <= found.status < 600 and found.status != 500


@pytest.fixture(scope="module")
def server() -> Iterator[ExportServer]:
    running = ExportServer(HttpConfig(port=0, api_token=TOKEN), surface())
    running.start()
    yield running
    running.stop()


def send(server: ExportServer, data: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", server.port), 10) as conn:
        conn.sendall(data)
        got = b""
        while chunk := conn.recv(65536):
            got += chunk
        return got


line_text = st.text(st.characters(codec="latin-1", exclude_characters="\r\n"), max_size=30).map(
    lambda t: t.encode("latin-1")
)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    method=st.sampled_from([b"GET", b"HEAD", b"POST", b"PUT", b"G\x00T"]) | line_text,
    target=st.sampled_from([p.encode() for p in PATHS]) | line_text,
    extra=st.lists(line_text, max_size=4),
    body=bodies,
    honest_length=st.booleans(),
)
def test_any_bytes_on_the_wire_get_a_status_line_and_never_a_500(
    server, method, target, extra, body, honest_length
):
    length = len(body) if honest_length else max(0, len(body) - 1)
    head = [method + b" " + target + b" HTTP/1.1", b"Content-Length: %d" % length, *extra]
    with Faults() as faults:
        got = send(server, b"\r\n".join(head) + b"\r\n\r\n" + body)
    assert got.startswith((b"HTTP/1.1 ", b"HTTP/1.0 ")), got[:80]
    status = int(got.split(b" ", 2)[1])
    assert status != 500 and 200 <= status < 600
    assert faults.found == []
