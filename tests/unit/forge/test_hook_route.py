"""POST /hooks/github on the hive's routes: open to GitHub without the bearer token (the
handler checks the signature), 404 where no webhook is configured."""

from __future__ import annotations

import json
from collections.abc import Mapping

from hive.forge.github.hooks import HookAnswer, Hooks
from hive.http import Surface
from hive.http.routes import Request, Routes
from hive.metrics import HiveMetrics

TOKEN = "an-api-token"


def _routes(hook: object) -> Routes:
    surface = Surface(registry=HiveMetrics().registry, github_hook=hook)  # type: ignore[arg-type]
    return Routes(surface, TOKEN, 64 * 1024)


def test_the_hook_needs_no_bearer_token_and_gets_the_raw_body():
    seen: list[tuple[Mapping[str, str], bytes]] = []

    def hook(headers: Mapping[str, str], body: bytes) -> HookAnswer:
        seen.append((headers, body))
        return HookAnswer(200, {"issue": 1, "synced": "new"})

    body = b'{"zen": "hi"}'
    answer = _routes(hook).answer(
        Request("POST", "/hooks/github", {"x-github-event": "ping"}, body)
    )
    assert answer.status == 200 and json.loads(answer.body) == {"issue": 1, "synced": "new"}
    assert seen == [({"x-github-event": "ping"}, body)]


def test_a_ping_is_204_with_no_body():
    answer = _routes(lambda h, b: HookAnswer(204, {})).answer(Request("POST", "/hooks/github"))
    assert answer.status == 204 and answer.body == b"" and b"204 No Content" in answer.head()


def test_an_unsigned_delivery_is_401_from_the_handler_itself():
    hooks = Hooks(None, secret="a-secret-of-enough-length", full_name="octo/hello", label="hive")
    answer = _routes(hooks.handle).answer(Request("POST", "/hooks/github", {}, b"{}"))
    assert answer.status == 401 and b"X-Hub-Signature-256" in answer.body


def test_no_webhook_configured_is_404_naming_the_variables():
    answer = _routes(None).answer(Request("POST", "/hooks/github", {}, b"{}"))
    assert answer.status == 404 and b"HIVE_GITHUB_WEBHOOK_SECRET" in answer.body


def test_a_get_is_405():
    answer = _routes(lambda h, b: HookAnswer(200, {})).answer(Request("GET", "/hooks/github"))
    assert answer.status == 405


def test_other_routes_still_need_the_token():
    answer = _routes(None).answer(Request("GET", "/api/orders"))
    assert answer.status == 401


def test_a_delivery_of_several_megabytes_reaches_the_hook_on_a_real_server():
    from hive.http import ExportServer, HttpConfig
    from tests.unit.surface.helpers import call

    seen: list[int] = []

    def hook(headers: Mapping[str, str], body: bytes) -> HookAnswer:
        seen.append(len(body))
        return HookAnswer(200, {"issue": 1, "synced": "same"})

    surface = Surface(registry=HiveMetrics().registry, github_hook=hook)
    server = ExportServer(HttpConfig(port=0), surface)
    server.start()
    try:
        body = b'{"zen": "' + b"x" * (3 * 1024 * 1024) + b'"}'
        assert call(server, "POST", "/hooks/github", body).status == 200
        assert seen == [len(body)]
        # every other route keeps its own bound
        assert call(server, "POST", "/api/issues", body).status == 413
    finally:
        server.stop()


def test_the_hooks_bound_is_githubs_25_mb_only_where_the_webhook_is_on():
    assert _routes(lambda h, b: HookAnswer(200, {})).body_max_for("/hooks/github") == 25 * 2**20
    assert _routes(lambda h, b: HookAnswer(200, {})).body_max_for("/api/issues") == 64 * 1024
    assert _routes(None).body_max_for("/hooks/github") == 64 * 1024


def test_large_deliveries_held_at_once_are_bounded_and_the_bound_comes_back(monkeypatch):
    """Anyone may post to the hook: only so many bytes of unsigned large bodies are held
    at once; one more is an at-once 503, and once a holder leaves its bytes are free."""
    import socket
    import time

    from hive.http import ExportServer, HttpConfig
    from hive.http import connection as http_connection
    from tests.unit.surface.helpers import call

    monkeypatch.setattr(http_connection, "LARGE_BODIES_MAX_BYTES", 3 * 1024 * 1024)
    surface = Surface(registry=HiveMetrics().registry, github_hook=lambda h, b: HookAnswer(204, {}))
    server = ExportServer(HttpConfig(port=0), surface)
    server.start()
    head = b"POST /hooks/github HTTP/1.1\r\nContent-Length: %d\r\n\r\n" % (2 * 1024 * 1024)
    try:
        with socket.create_connection(("127.0.0.1", server.port), 5) as holder:
            holder.sendall(head + b"{")  # 2 MiB announced, one byte sent: it holds its bytes
            with socket.create_connection(("127.0.0.1", server.port), 5) as second:
                second.sendall(head)
                answer = second.recv(4096)
            assert answer.split(b" ", 2)[1] == b"503"
            assert b"too many large bodies at once" in answer
        # the holder left (the server sees it close at its next read): its bytes are free
        body = b'{"zen": "' + b"x" * (2 * 1024 * 1024 - 11) + b'"}'
        deadline = time.monotonic() + 10
        status = call(server, "POST", "/hooks/github", body).status
        while status == 503 and time.monotonic() < deadline:
            status = call(server, "POST", "/hooks/github", body).status
        assert status == 204
    finally:
        server.stop()
