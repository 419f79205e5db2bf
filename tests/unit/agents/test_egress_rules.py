"""The egress proxy's reading of a request: what goes where, and what is refused."""

from __future__ import annotations

import pytest

from hive.agents.egress import Refusal, allowed, parse_head

ALLOW = frozenset({"api.anthropic.com:443", "127.0.0.1:8080"})


def test_a_connect_to_an_allowed_host_is_a_tunnel() -> None:
    request = parse_head(b"CONNECT API.Anthropic.com:443 HTTP/1.1\r\nHost: x\r\n\r\n")
    assert (request.host, request.port, request.tunnel) == ("api.anthropic.com", 443, True)
    assert allowed(request, ALLOW)


def test_a_connect_elsewhere_is_not_allowed() -> None:
    assert not allowed(parse_head(b"CONNECT evil.example:443 HTTP/1.1\r\n\r\n"), ALLOW)
    assert not allowed(parse_head(b"CONNECT api.anthropic.com:22 HTTP/1.1\r\n\r\n"), ALLOW)


def test_a_plain_request_is_forwarded_in_origin_form_and_closed() -> None:
    head = (
        b"POST http://127.0.0.1:8080/v1/messages?x=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n"
        b"Proxy-Authorization: Basic x\r\nConnection: keep-alive\r\n\r\n"
    )
    request = parse_head(head)
    assert (request.host, request.port, request.tunnel) == ("127.0.0.1", 8080, False)
    assert request.head.startswith(b"POST /v1/messages?x=1 HTTP/1.1\r\n")
    assert b"Proxy-Authorization" not in request.head
    assert b"keep-alive" not in request.head
    assert request.head.endswith(b"Connection: close\r\n\r\n")
    assert parse_head(b"GET http://example.com/ HTTP/1.1\r\n\r\n").port == 80


@pytest.mark.parametrize(
    "head",
    [
        b"GET /relative HTTP/1.1\r\n\r\n",
        b"nonsense\r\n\r\n",
        b"CONNECT nohost HTTP/1.1\r\n\r\n",
        b"CONNECT host:99999 HTTP/1.1\r\n\r\n",
        b"GET ftp://x/ HTTP/1.1\r\n\r\n",
    ],
)
def test_what_is_not_a_proxy_request_is_refused(head: bytes) -> None:
    with pytest.raises(Refusal):
        parse_head(head)
