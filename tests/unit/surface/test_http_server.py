"""The HTTP server over real loopback sockets, without a database: probes, routing,
errors, the token and the server's lifecycle."""

from __future__ import annotations

import logging
import socket
import threading
from collections.abc import Iterator

import pytest

from hive.errors import HiveError
from hive.http import ExportServer, HttpConfig, Surface, check_config, store_probe
from hive.http.server import is_loopback
from hive.metrics import HiveMetrics
from hive.services.errors import BadRequest, Conflict, NotFound
from hive.settings import Settings
from hive.store.issues import NewIssue

from .helpers import bearer, call, call_once, post_json

TOKEN = "s3cret-token-for-tests"


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def draining() -> threading.Event:
    return threading.Event()


@pytest.fixture
def added() -> list[NewIssue]:
    return []


@pytest.fixture
def surface(draining: threading.Event, added: list[NewIssue]) -> Surface:
    def add(issue: NewIssue) -> int:
        added.append(issue)
        return 41 + len(added)

    return Surface(registry=HiveMetrics().registry, draining=draining.is_set, add_issue=add)


@pytest.fixture
def server(surface: Surface) -> Iterator[ExportServer]:
    running = ExportServer(HttpConfig(port=0), surface)
    running.start()
    yield running
    running.stop()


@pytest.fixture
def guarded(surface: Surface) -> Iterator[ExportServer]:
    running = ExportServer(HttpConfig(port=0, api_token=TOKEN), surface)
    running.start()
    yield running
    running.stop()


def test_healthz_answers_while_the_process_lives(server):
    answer = call(server, "GET", "/healthz")
    assert (answer.status, answer.json()) == (200, {"alive": True})
    assert answer.headers["Content-Type"] == "application/json"


def test_readyz_is_503_while_draining_and_200_otherwise(server, draining):
    assert call(server, "GET", "/readyz").status == 200
    draining.set()
    answer = call(server, "GET", "/readyz")
    assert answer.status == 503
    assert answer.json() == {"ready": False, "error": "draining"}


def test_readyz_is_503_while_the_store_is_unreachable():
    probe = store_probe(f"postgresql://hive@127.0.0.1:{closed_port()}/hive", 1.0)
    answer = call_once(Surface(HiveMetrics().registry, store_reachable=probe), "GET", "/readyz")
    assert answer.status == 503
    assert answer.json()["error"] == "store unreachable"


def test_readyz_is_not_ready_when_its_question_raises():
    def broken() -> bool:
        raise RuntimeError("no idea")

    surface = Surface(HiveMetrics().registry, draining=broken)
    assert call_once(surface, "GET", "/readyz").status == 503


@pytest.mark.parametrize("issue", ["abc", "-1", "0", "2147483648", "99999999999999999999", "1.0"])
def test_an_issue_that_is_not_a_positive_int4_is_400(server, issue):
    answer = call(server, "GET", f"/queen/export/{issue}")
    assert answer.status == 400
    assert "not a positive integer" in answer.json()["error"]


def test_an_unknown_route_is_a_json_404(server):
    answer = call(server, "GET", "/nowhere")
    assert (answer.status, answer.json()) == (404, {"error": "no route /nowhere"})


def test_a_wrong_method_is_405_with_allow(server):
    answer = call(server, "GET", "/api/issues")
    assert answer.status == 405
    assert answer.headers["Allow"] == "POST"


def test_a_method_the_server_does_not_know_is_answered_in_json(server):
    answer = call(server, "PUT", "/healthz")
    assert answer.status == 501
    assert "error" in answer.json()


def test_routes_without_a_source_say_so_with_503(server):
    for path in ("/queen/export", "/queen/export/7", "/api/orders"):
        answer = call(server, "GET", path)
        assert answer.status == 503, path
        assert "not served by this process" in answer.json()["error"]


def test_post_issue_answers_201_with_the_new_number(server, added):
    answer = post_json(server, "/api/issues", {"title": " Fix the thing ", "labels": ["P1"]})
    assert (answer.status, answer.json()) == (201, {"number": 42})
    assert added == [NewIssue(title="Fix the thing", labels=("P1",))]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "title"),
        ({"title": ""}, "title"),
        ({"title": 3}, "title"),
        ({"title": "t", "body": ["x"]}, "body"),
        ({"title": "t", "labels": "bug"}, "labels"),
        ({"title": "t", "labels": ["ok", 7]}, "labels[1]"),
        ({"title": "t", "boundary": ["../etc/passwd"]}, "boundary[0]"),
        ({"title": "t", "boundary": ["/abs/path"]}, "boundary[0]"),
        ({"title": "t", "criteria": ["fine", " "]}, "criteria[1]"),
        ({"title": "t", "lables": ["typo"]}, "lables"),
        (["title"], "body"),
    ],
)
def test_a_bad_issue_body_is_400_naming_the_field(server, added, body, field):
    answer = post_json(server, "/api/issues", body)
    assert answer.status == 400
    assert answer.json()["error"].startswith(f"{field}:")
    assert added == []


@pytest.mark.parametrize(
    ("refusal", "status"), [(BadRequest, 400), (NotFound, 404), (Conflict, 409)]
)
def test_a_use_case_refusal_answers_its_own_status(refusal, status):
    def add(issue: NewIssue) -> int:
        raise refusal(f"issue {issue.title!r} refused")

    running = ExportServer(HttpConfig(port=0), Surface(HiveMetrics().registry, add_issue=add))
    running.start()
    try:
        answer = post_json(running, "/api/issues", {"title": "t"})
    finally:
        running.stop()
    assert (answer.status, answer.json()) == (status, {"error": "issue 't' refused"})


def test_a_body_that_is_not_json_is_400(server):
    answer = call(server, "POST", "/api/issues", b"{title", {"Content-Type": "application/json"})
    assert answer.status == 400
    assert answer.json()["error"].startswith("body: not JSON")


def test_an_oversized_body_is_413_and_is_not_read(server, added):
    huge = b'{"title": "' + b"x" * (70 * 1024) + b'"}'
    answer = call(server, "POST", "/api/issues", huge)
    assert answer.status == 413
    assert added == []


def test_every_route_but_the_probes_needs_the_token(guarded):
    for path in ("/healthz", "/readyz", "/metrics"):
        assert call(guarded, "GET", path).status == 200, path
    for method, path in (
        ("GET", "/queen/export/7"),
        ("GET", "/api/orders"),
        ("POST", "/api/issues"),
    ):
        answer = call(guarded, method, path, b"{}")
        assert answer.status == 401, path
        assert answer.headers["WWW-Authenticate"].startswith("Bearer")
    wrong = call(guarded, "GET", "/queen/export/abc", headers=bearer(TOKEN + "x"))
    assert wrong.status == 401
    right = call(guarded, "GET", "/queen/export/abc", headers=bearer(TOKEN))
    assert right.status == 400  # past the token, into the route


def test_the_token_never_reaches_the_access_log(guarded, caplog):
    caplog.set_level(logging.DEBUG, logger="hive.http")
    call(guarded, "GET", f"/api/orders?token={TOKEN}", headers=bearer(TOKEN))
    call(guarded, "GET", "/api/orders", headers=bearer("wrong"))
    call(guarded, "GET", f"/{TOKEN}")
    lines = [r.getMessage() for r in caplog.records]
    assert any("/api/orders 503" in line for line in lines)
    assert any("/api/orders 401" in line for line in lines)
    assert not [line for line in lines if TOKEN in line]


def test_a_non_loopback_address_without_a_token_is_refused_at_start(surface):
    server = ExportServer(HttpConfig(host="0.0.0.0", port=0), surface)
    with pytest.raises(HiveError, match="without HIVE_API_TOKEN"):
        server.start()
    server.stop()


def test_a_non_loopback_address_with_a_token_starts(surface):
    config = HttpConfig(host="0.0.0.0", port=0, api_token=TOKEN)
    assert call_once(surface, "GET", "/healthz", config=config).status == 200


def test_a_port_in_use_is_one_clear_line(server, surface):
    second = ExportServer(HttpConfig(port=server.port), surface)
    with pytest.raises(HiveError, match=f"cannot serve HTTP on 127.0.0.1:{server.port}"):
        second.start()


def test_stop_is_safe_before_start_and_twice_and_closes_the_port(surface):
    server = ExportServer(HttpConfig(port=0), surface)
    server.stop()
    server.start()
    server.start()  # a second start keeps the first socket
    port = server.port
    assert port != 0
    server.stop()
    server.stop()
    with pytest.raises(ConnectionRefusedError), socket.create_connection(("127.0.0.1", port), 1):
        pass
    with pytest.raises(RuntimeError):
        _ = server.port


def test_the_config_comes_from_the_settings_door(surface):
    settings = Settings.from_env({"HIVE_HTTP_ADDR": "0.0.0.0:0"})
    config = HttpConfig.from_settings(settings)
    assert (config.host, config.port, config.api_token) == ("0.0.0.0", 0, None)
    with pytest.raises(HiveError, match=r"refusing to serve HTTP on 0\.0\.0\.0:0 without"):
        check_config(config)
    check_config(HttpConfig.from_settings(Settings.from_env({})))  # loopback: fine
    token = HttpConfig.from_settings(Settings.from_env({"HIVE_API_TOKEN": TOKEN}))
    assert (token.host, token.port, token.api_token) == ("127.0.0.1", 8080, TOKEN)


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.8.9.10", True),
        ("::1", True),
        ("localhost", True),
        ("0.0.0.0", False),
        ("::", False),
        ("10.1.2.3", False),
        ("no-such-host.invalid", False),
    ],
)
def test_loopback_is_recognised_by_address_and_by_name(host, loopback):
    assert is_loopback(host) is loopback


@pytest.mark.skipif(not socket.has_ipv6, reason="no IPv6 on this machine")
def test_an_ipv6_loopback_address_is_served(surface):
    server = ExportServer(HttpConfig(host="::1", port=0), surface)
    try:
        server.start()
    except HiveError as err:
        pytest.skip(f"IPv6 loopback unavailable: {err}")
    try:
        assert server.url.startswith("http://[::1]:")
        with socket.create_connection(("::1", server.port), 2) as conn:
            conn.sendall(b"GET /healthz HTTP/1.0\r\n\r\n")
            assert conn.recv(64).startswith(b"HTTP/1.0 200")
    finally:
        server.stop()
