"""Which writes a browser may make: a bearer token always; a browser's Basic credentials
(or none, on a hive without a token) only from this origin with the page's CSRF token."""

import pytest

from hive.rules.browser_writes import (
    CROSS_SITE,
    NO_ORIGIN,
    NO_TOKEN,
    Credential,
    origin_host,
    write_refusal,
)

HOST = "hive.example:8080"
ORIGIN = "http://hive.example:8080"


def refusal(credential=Credential.BASIC, origin=ORIGIN, host=HOST, site="same-origin", ok=True):
    return write_refusal(credential, origin=origin, host=host, fetch_site=site, page_token_valid=ok)


def test_a_bearer_token_needs_neither_origin_nor_page_token():
    assert (
        refusal(Credential.BEARER, origin="http://evil.example", site="cross-site", ok=False)
        is None
    )


def test_a_page_write_from_this_origin_with_its_token_goes_on():
    assert refusal() is None
    assert refusal(site=None) is None  # an older browser sends no Sec-Fetch-Site
    assert refusal(origin="HTTPS://Hive.Example:8080/", host="hive.example:8080 ") is None


@pytest.mark.parametrize(
    ("given", "why"),
    [
        ({"site": "cross-site"}, CROSS_SITE),
        ({"site": "same-site"}, CROSS_SITE),
        ({"site": "none"}, CROSS_SITE),
        ({"origin": None}, NO_ORIGIN),
        ({"origin": "http://evil.example"}, CROSS_SITE),
        ({"origin": "http://hive.example:8081"}, CROSS_SITE),
        ({"origin": "null"}, CROSS_SITE),
        ({"host": None}, CROSS_SITE),
        ({"ok": False}, NO_TOKEN),
    ],
)
def test_a_basic_write_is_refused_without_the_origin_or_the_token(given, why):
    assert refusal(**given) == why


def test_without_a_token_a_script_writes_but_a_browser_needs_the_page():
    assert refusal(Credential.NONE, origin=None, site=None, ok=False) is None
    assert refusal(Credential.NONE, origin="http://evil.example", ok=False) == CROSS_SITE
    assert refusal(Credential.NONE, origin=None, site="cross-site") == CROSS_SITE
    assert refusal(Credential.NONE, ok=False) == NO_TOKEN
    assert refusal(Credential.NONE) is None


@pytest.mark.parametrize(
    ("origin", "host"),
    [
        ("http://a.example", "a.example"),
        ("https://A.example:8443", "a.example:8443"),
        ("null", None),
        ("file://", None),
        ("http://a.example/path", None),
        ("", None),
    ],
)
def test_origin_host(origin, host):
    assert origin_host(origin) == host
