"""More hostile requests of the kinds issue 14 lists, over real loopback sockets: other
verbs on every route, HTTP/1.0, pipelining, odd header bytes, a huge path, query strings,
a client that never reads its answer. Each a clear answer and no traceback."""

from __future__ import annotations

import logging
import shutil
import socket
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from hive.http import ExportServer, HttpConfig, Surface
from hive.http import connection as http_connection
from hive.http.server import BACKLOG
from hive.metrics import HiveMetrics
from hive.store.issues import NewIssue

from .helpers import call
from .test_http_hostile import json_of, raw, status_of
from .test_http_properties import PATHS, TOKEN, Faults

AUTH = f"Authorization: Bearer {TOKEN}\r\n".encode()


@pytest.fixture
def added() -> list[NewIssue]:
    return []


@pytest.fixture
def server(added: list[NewIssue]) -> Iterator[ExportServer]:
    def add(issue: NewIssue) -> int:
        added.append(issue)
        return len(added)

    surface = Surface(registry=HiveMetrics().registry, add_issue=add, orders=lambda: [])
    running = ExportServer(HttpConfig(port=0, api_token=TOKEN), surface)
    running.start()
    yield running
    running.stop()


@pytest.mark.parametrize("method", ["PUT", "DELETE", "OPTIONS", "PATCH", "TRACE", "CONNECT", "get"])
def test_a_verb_the_hive_does_not_serve_is_501_on_every_route(server, method):
    with Faults() as faults:
        for path in PATHS:
            answer = raw(server, f"{method} {path} HTTP/1.1\r\n".encode() + AUTH + b"\r\n")
            assert status_of(answer) == 501, (path, answer[:80])
            assert json_of(answer)["error"] == f"{method} is not served here; use GET, HEAD or POST"
    assert faults.found == []


def test_an_http_1_0_request_is_answered_in_http_1_0(server):
    answer = raw(server, b"GET /healthz HTTP/1.0\r\n\r\n")
    assert answer.startswith(b"HTTP/1.0 200 OK\r\n")
    assert b"\r\nConnection: close\r\n" in answer


def test_pipelined_requests_get_one_answer_and_the_rest_is_not_run(server, added):
    first = b'{"title": "one"}'
    second = b'{"title": "two"}'
    data = b"".join(
        b"POST /api/issues HTTP/1.1\r\n" + AUTH + b"Content-Length: %d\r\n\r\n" % len(body) + body
        for body in (first, second)
    )
    answer = raw(server, data)
    assert status_of(answer) == 201 and answer.count(b"HTTP/1.1 ") == 1
    assert [issue.title for issue in added] == ["one"]


@pytest.mark.parametrize(
    ("header", "status"),
    [
        (b"X-Odd: \xff\xfe\x80 latin-1 bytes", 200),
        (b"Authorization: Bearer \xff\xfe", 401),
        (b"Authorization: Bearer " + TOKEN.encode() + b"\xc3\xa9", 401),
        (b"Accept: application/openmetrics-text\xff", 200),
        (b"X-Del: a\x7fb", 400),
        (b"X-Esc: a\x1b[2Jb", 400),
        (b"X-Cr: a\rb", 400),
    ],
)
def test_a_header_with_odd_bytes_is_a_clear_answer(server, header, status):
    with Faults() as faults:
        token = b"" if header.startswith(b"Authorization") else AUTH
        answer = raw(server, b"GET /api/orders HTTP/1.1\r\n" + token + header + b"\r\n\r\n")
    assert status_of(answer) == status, answer[:120]
    assert faults.found == []


def test_a_huge_path_is_431_and_a_long_one_is_a_404_with_its_path_cut(server):
    assert status_of(raw(server, b"GET /" + b"a" * 17_000 + b" HTTP/1.1\r\n\r\n")) == 431
    answer = raw(server, b"GET /" + b"a" * 8_000 + b" HTTP/1.1\r\n" + AUTH + b"\r\n")
    assert status_of(answer) == 404
    assert len(str(json_of(answer)["error"])) < 220


@pytest.mark.parametrize(
    ("method", "target", "status"),
    [
        ("GET", "/api/orders?x=%00&y=%1b[2J", 200),
        ("GET", "/metrics?name[]=x&name[]=y", 200),
        ("GET", "/healthz?" + "q" * 10_000, 200),
        ("POST", "/api/issues?title=ignored", 201),
        ("GET", "/api/issues/x?y", 400),
        ("GET", "/nowhere?%00", 404),
    ],
)
def test_a_query_string_is_ignored_by_every_route(server, method, target, status):
    with Faults() as faults:
        answer = call(
            server, method, target, b'{"title": "t"}', {"Authorization": f"Bearer {TOKEN}"}
        )
    assert answer.status == status, answer.body
    assert faults.found == []


def test_a_client_that_never_reads_its_answer_is_dropped_and_holds_nothing(monkeypatch):
    monkeypatch.setattr(http_connection, "WRITE_STALL_SECONDS", 0.5)
    big = [{"issue": n, "title": "x" * 1000} for n in range(16_000)]  # about 16 MB
    surface = Surface(registry=HiveMetrics().registry, orders=lambda: big)
    running = ExportServer(HttpConfig(port=0, workers=1), surface)
    dropped = threading.Event()

    class Watch(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if "stopped reading its answer" in record.getMessage():
                dropped.set()

    watch = Watch(logging.DEBUG)
    logger = logging.getLogger("hive.http")
    logger.addHandler(watch)
    previous = logger.level
    logger.setLevel(logging.DEBUG)
    running.start()
    try:
        sleeper = socket.socket()
        sleeper.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sleeper.connect(("127.0.0.1", running.port))
        sleeper.sendall(b"GET /api/orders HTTP/1.1\r\n\r\n")
        # while the answer waits on the sleeper, the one worker serves everyone else
        assert call(running, "GET", "/healthz").status == 200
        assert dropped.wait(15), "a client that reads nothing was never dropped"
        sleeper.settimeout(5)
        got = b""
        try:
            while chunk := sleeper.recv(1 << 20):
                got += chunk
        except ConnectionResetError:
            pass
        sleeper.close()
        assert len(got) < 16_000_000  # cut off: the server stopped writing to it
        assert call(running, "GET", "/healthz").status == 200
    finally:
        running.stop()
        logger.removeHandler(watch)
        logger.setLevel(previous)


@pytest.mark.skipif(shutil.which("ss") is None, reason="ss (iproute2) reads a listener's backlog")
def test_the_listener_s_backlog_holds_a_burst_of_connections(server):
    listed = subprocess.run(
        ["ss", "-ltnH", f"sport = :{server.port}"], capture_output=True, text=True, check=True
    ).stdout.split()
    somaxconn = int(Path("/proc/sys/net/core/somaxconn").read_text())
    assert int(listed[2]) == min(BACKLOG, somaxconn) >= 512  # Send-Q: the backlog (was 5)
