"""Hostile requests over real loopback sockets: every one a clear answer, no worker held,
no traceback (issue 14)."""

from __future__ import annotations

import json
import logging
import socket
import threading
import time
from collections.abc import Iterator

import pytest

from hive.http import ExportServer, HttpConfig, Surface
from hive.http import connection as http_connection
from hive.metrics import HiveMetrics
from hive.store.issues import NewIssue

from .helpers import call, post_json


@pytest.fixture
def added() -> list[NewIssue]:
    return []


@pytest.fixture
def surface(added: list[NewIssue]) -> Surface:
    def add(issue: NewIssue) -> int:
        added.append(issue)
        return len(added)

    return Surface(registry=HiveMetrics().registry, add_issue=add, orders=lambda: [])


def serving(surface: Surface, **config: object) -> ExportServer:
    server = ExportServer(HttpConfig(port=0, **config), surface)  # type: ignore[arg-type]
    server.start()
    return server


@pytest.fixture
def server(surface: Surface) -> Iterator[ExportServer]:
    running = serving(surface)
    yield running
    running.stop()


def raw(server: ExportServer, data: bytes, timeout: float = 5.0) -> bytes:
    """Send `data` as it is and read until the server closes."""
    with socket.create_connection(("127.0.0.1", server.port), timeout) as conn:
        conn.sendall(data)
        got = b""
        while chunk := conn.recv(65536):
            got += chunk
        return got


def status_of(answer: bytes) -> int:
    return int(answer.split(b" ", 2)[1])


def json_of(answer: bytes) -> dict[str, object]:
    value = json.loads(answer.split(b"\r\n\r\n", 1)[1])
    assert isinstance(value, dict)
    return value


@pytest.mark.parametrize("field", ["title", "body", "labels", "criteria"])
@pytest.mark.parametrize(
    "char", ["\x00", "\x1b", "\r", "\u202e", "\x7f", "\x9b", "\u2028", "\u2029", "\ud800"]
)
def test_a_control_character_in_any_field_is_400_naming_it(server, added, field, char):
    value = f"a{char}b"
    issue = {"title": "t", field: [value] if field in ("labels", "criteria") else value}
    answer = post_json(server, "/api/issues", issue)
    assert answer.status == 400, answer.body
    assert answer.json()["error"].startswith(field)
    assert f"U+{ord(char):04X}" in answer.json()["error"]
    assert added == []


def test_a_lone_surrogate_is_400_not_a_store_error(server, added):
    body = b'{"title": "t", "labels": ["a\\ud800"]}'
    answer = call(server, "POST", "/api/issues", body)
    assert (answer.status, answer.json()["error"]) == (
        400,
        "labels[0]: holds U+D800 (no control character, bidirectional control or lone surrogate)",
    )
    assert added == []


def test_a_body_s_crlf_is_stored_as_lf_and_its_tabs_and_newlines_kept(server, added):
    answer = post_json(server, "/api/issues", {"title": "t", "body": "one\r\ntwo\n\tthree"})
    assert answer.status == 201
    assert added[0].body == "one\ntwo\n\tthree"


def test_deeply_nested_json_is_400_not_a_recursion_error(server, caplog):
    for body in (b"[" * 200_000, b'{"a":' * 30_000 + b"1" + b"}" * 30_000):
        answer = call(server, "POST", "/api/issues", body)
        assert answer.status in (400, 413)
        assert answer.json()["error"].startswith("body:")
    deep = b"[" * 20_000 + b"]" * 20_000
    answer = call(server, "POST", "/api/issues", deep)
    assert (answer.status, answer.json()["error"]) == (400, "body: JSON nested too deeply")
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


def test_a_number_python_will_not_parse_is_400(server):
    answer = call(server, "POST", "/api/issues", b'{"title": ' + b"9" * 5000 + b"}")
    assert answer.status == 400 and answer.json()["error"].startswith("body: not JSON")
    assert "sys." not in answer.json()["error"]  # Python's advice is not the client's


def test_head_answers_like_get_without_a_body(server):
    get = call(server, "GET", "/healthz")
    head = call(server, "HEAD", "/healthz")
    assert (head.status, head.body) == (200, b"")
    assert head.headers["Content-Length"] == get.headers["Content-Length"] != "0"
    wrong = call(server, "HEAD", "/api/issues")
    assert (wrong.status, wrong.headers["Allow"]) == (405, "POST")
    assert call(server, "POST", "/healthz", b"").headers["Allow"] == "GET, HEAD"


def test_a_body_shorter_than_its_length_is_408_at_the_deadline(surface, monkeypatch):
    monkeypatch.setattr(http_connection, "REQUEST_DEADLINE_SECONDS", 0.5)
    running = serving(surface)
    try:
        began = time.monotonic()
        answer = raw(running, b"POST /api/issues HTTP/1.1\r\nContent-Length: 100\r\n\r\n{")
        took = time.monotonic() - began
    finally:
        running.stop()
    assert status_of(answer) == 408
    assert "not whole within 0.5 s" in json_of(answer)["error"]
    assert 0.4 < took < 3


def test_a_head_that_never_ends_is_408_too(surface, monkeypatch):
    monkeypatch.setattr(http_connection, "REQUEST_DEADLINE_SECONDS", 0.3)
    running = serving(surface)
    try:
        assert status_of(raw(running, b"GET /healthz HTTP/1.1\r\nX-Slow: 1")) == 408
        assert status_of(raw(running, b"")) == 408  # a client that connects and says nothing
    finally:
        running.stop()


@pytest.mark.parametrize(
    ("data", "status"),
    [
        (
            b"POST /api/issues HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
            b"5\r\nhello\r\n0\r\n\r\n",
            411,
        ),
        (b"POST /api/issues HTTP/1.1\r\n\r\n", 400),  # no length: no body, and no JSON
        ("POST /api/issues HTTP/1.1\r\nContent-Length: ٣\r\n\r\nabc".encode(), 400),
        (b"POST /api/issues HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd", 400),
        (b"POST /api/issues HTTP/1.1\r\nContent-Length: -1\r\n\r\n", 400),
        (b"POST /api/issues HTTP/1.1\r\nContent-Length: 99999999999999999999999\r\n\r\n", 400),
        (b"GET /a\x1bb HTTP/1.1\r\n\r\n", 400),
        (b"GET /\xff HTTP/1.1\r\n\r\n", 400),
        (b"GET healthz HTTP/1.1\r\n\r\n", 400),
        (b"GET /healthz HTTP/2.0\r\n\r\n", 505),
        (b"GET  /healthz HTTP/1.1\r\n\r\n", 400),
        (b"BREW /healthz HTTP/1.1\r\n\r\n", 501),
        (b"GET /healthz HTTP/1.1\r\nX: a\x00b\r\n\r\n", 400),
        (b"GET /healthz HTTP/1.1\r\nNo colon here\r\n\r\n", 400),
        (b"GET /healthz HTTP/1.1\r\n" + b"X-Big: " + b"a" * 20_000 + b"\r\n\r\n", 431),
        (b"GET /healthz HTTP/1.1\r\n" + b"X: 1\r\n" * 101 + b"\r\n", 431),
        (b"\r\n\r\n", 400),
    ],
)
def test_a_malformed_request_is_answered_by_the_loop_in_json(server, data, status):
    answer = raw(server, data)
    assert status_of(answer) == status
    assert json_of(answer)["error"]


def test_an_oversized_body_is_413_before_it_is_sent(server, added):
    answer = raw(server, b"POST /api/issues HTTP/1.1\r\nContent-Length: 70000\r\n\r\n")
    assert status_of(answer) == 413
    assert added == []


def test_expect_100_continue_is_honoured(server, added):
    with socket.create_connection(("127.0.0.1", server.port), 5) as conn:
        body = b'{"title": "t"}'
        conn.sendall(
            b"POST /api/issues HTTP/1.1\r\nExpect: 100-continue\r\n"
            + f"Content-Length: {len(body)}\r\n\r\n".encode()
        )
        assert conn.recv(64) == b"HTTP/1.1 100 Continue\r\n\r\n"
        conn.sendall(body)
        assert conn.recv(64).startswith(b"HTTP/1.1 201")


def test_slow_clients_hold_no_worker(surface):
    running = serving(surface, workers=2)
    slow = [socket.create_connection(("127.0.0.1", running.port), 5) for _ in range(40)]
    try:
        for conn in slow:
            conn.sendall(b"GET /healthz HTTP/1.1\r\nX-Slow: ")
        began = time.monotonic()
        for _ in range(10):
            assert call(running, "GET", "/api/orders").status == 200
        # had the slow clients held the 2 workers, these calls would have waited for
        # the slow ones' 408 at the request deadline
        assert time.monotonic() - began < http_connection.REQUEST_DEADLINE_SECONDS
    finally:
        for conn in slow:
            conn.close()
        running.stop()


def test_a_full_queue_answers_503_at_once(added):
    release = threading.Event()
    entered = threading.Semaphore(0)

    def orders() -> list[dict[str, object]]:
        entered.release()
        release.wait(10)
        return []

    surface = Surface(HiveMetrics().registry, orders=orders)
    running = serving(surface, workers=1, queue_max=1)
    held: list[socket.socket] = []
    try:
        for _ in range(2):  # one at the worker, then one waiting in the queue
            conn = socket.create_connection(("127.0.0.1", running.port), 5)
            conn.sendall(b"GET /api/orders HTTP/1.1\r\n\r\n")
            held.append(conn)
            if len(held) == 1:
                assert entered.acquire(timeout=5)
        deadline = time.monotonic() + 5
        while running.waiting < 1:  # the loop has read the second one whole and queued it
            assert time.monotonic() < deadline, "the second request never reached the queue"
            time.sleep(0.01)
        # the only worker is held until `release`: a 503 now is the loop's own answer
        answer = raw(running, b"GET /api/orders HTTP/1.1\r\n\r\n")
        assert status_of(answer) == 503
        assert json_of(answer)["error"] == "the server is busy; try again"
        release.set()
        for conn in held:
            assert conn.recv(64).startswith(b"HTTP/1.1 200")
    finally:
        release.set()
        for conn in held:
            conn.close()
        running.stop()


def test_too_many_connections_answer_503_at_once(surface):
    running = serving(surface, connections_max=3)
    idle = [socket.create_connection(("127.0.0.1", running.port), 5) for _ in range(3)]
    try:
        answer = raw(running, b"GET /healthz HTTP/1.1\r\n\r\n")
        assert status_of(answer) == 503
        assert json_of(answer)["error"] == "the server is full; try again"
    finally:
        for conn in idle:
            conn.close()
        running.stop()


def test_the_access_log_shows_no_control_character_and_no_traceback(server, caplog):
    caplog.set_level(logging.DEBUG, logger="hive.http")
    call(server, "GET", "/nowhere%1b")
    raw(server, b"GET /a\x1b[2Jb HTTP/1.1\r\n\r\n")
    for record in caplog.records:
        assert "\x1b" not in record.getMessage()
        assert record.exc_info is None


def test_a_stop_with_requests_in_flight_returns(surface):
    running = serving(surface, workers=1)
    slow = [socket.create_connection(("127.0.0.1", running.port), 5) for _ in range(5)]
    stopping = threading.Thread(target=running.stop)
    stopping.start()
    stopping.join(60)  # how fast a stop is, is hive bench drain's to say
    assert not stopping.is_alive(), "the stop never returned"
    for conn in slow:
        try:
            closed = conn.recv(64) == b""
        except ConnectionResetError:  # one the loop had not accepted yet: reset by the close
            closed = True
        assert closed
        conn.close()
