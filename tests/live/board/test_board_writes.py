"""A person's actions through the API's routes (DESIGN 11) over real HTTP on a real store:
approve, reject with a note, cancel, close and reopen answer the sentence `hive` prints
(its refusals too); a browser's Basic credentials write only from the board's own origin
with the page's CSRF token, a bearer token writes with neither."""

from __future__ import annotations

import json
import re

import pytest

from hive.store import issues, orders
from tests.live.surface.conftest import TOKEN
from tests.live.surface.test_commands import hive, one_line_error
from tests.unit.surface.helpers import bearer, call

from .acting import accepted, add
from .sse import basic

pytestmark = pytest.mark.live

CSRF = re.compile(r'data-csrf="([^"]+)"')


def page_token(server, path: str = "/board") -> str:
    page = call(server, "GET", path, headers=basic(TOKEN))
    assert page.status == 200
    found = CSRF.search(page.body.decode())
    assert found is not None
    return found.group(1)


def browser(server, token: str | None, **extra: str) -> dict[str, str]:
    """The headers a page's fetch sends: Basic credentials, its origin, its token."""
    headers = {
        **basic(TOKEN),
        "Origin": f"http://127.0.0.1:{server.port}",
        "Sec-Fetch-Site": "same-origin",
        "Content-Type": "application/json",
    }
    if token is not None:
        headers["X-Hive-CSRF"] = token
    headers.update(extra)
    return headers


def state(world, n: int) -> str:
    found = issues.get(world.db, n)
    assert found is not None
    return found.state


def test_a_write_from_the_page_with_its_token_closes_the_issue(world, serve):
    add(world, 1)
    server = serve(token=TOKEN)
    headers = browser(server, page_token(server))
    answer = call(server, "POST", "/api/issues/1/close", headers=headers)
    assert answer.status == 200, answer.body
    assert answer.json()["said"] == "closed #1 (closed by hand)"
    assert state(world, 1) == "closed"


@pytest.mark.parametrize(
    ("why", "change", "refusal"),
    [
        ("no origin", {"Origin": None}, "must carry its Origin"),
        ("another site", {"Origin": "http://evil.example"}, "from another site"),
        ("a cross-site fetch", {"Sec-Fetch-Site": "cross-site"}, "from another site"),
        ("a null origin", {"Origin": "null"}, "from another site"),
        ("no token", {"X-Hive-CSRF": None}, "CSRF token is missing or stale"),
        ("a forged token", {"X-Hive-CSRF": "0" * 32 + ".1700000000." + "f" * 64}, "CSRF"),
    ],
)
def test_a_basic_write_without_the_origin_or_the_token_changes_nothing(
    world, serve, why, change, refusal
):
    add(world, 1)
    server = serve(token=TOKEN)
    headers = browser(server, page_token(server))
    for name, value in change.items():
        if value is None:
            headers.pop(name)
        else:
            headers[name] = value
    answer = call(server, "POST", "/api/issues/1/close", headers=headers)
    assert answer.status == 403, why
    assert refusal in answer.json()["error"]
    assert state(world, 1) == "open"


def test_a_token_from_a_hive_with_another_api_token_is_refused(world, serve):
    add(world, 1)
    other = serve(token=TOKEN + "-other")
    foreign = call(other, "GET", "/board", headers=basic(TOKEN + "-other")).body.decode()
    server = serve(token=TOKEN)
    token = CSRF.search(foreign).group(1)  # type: ignore[union-attr]
    answer = call(server, "POST", "/api/issues/1/close", headers=browser(server, token))
    assert answer.status == 403 and state(world, 1) == "open"


def test_a_bearer_write_needs_neither_origin_nor_page_token(world, serve):
    add(world, 1)
    server = serve(token=TOKEN)
    answer = call(server, "POST", "/api/issues/1/close", headers=bearer(TOKEN))
    assert answer.status == 200 and state(world, 1) == "closed"


def test_without_a_token_a_script_writes_and_another_site_does_not(world, serve):
    add(world, 1)
    server = serve()
    forged = {"Origin": "http://evil.example", "Content-Type": "application/x-www-form-urlencoded"}
    answer = call(server, "POST", "/api/issues/1/close", b"x=1", headers=forged)
    assert answer.status == 403 and state(world, 1) == "open"
    assert call(server, "POST", "/api/issues/1/close").status == 200  # curl: no Origin
    assert state(world, 1) == "closed"


def test_approve_from_the_page_opens_the_gate(world, serve):
    accepted(world, 1)
    server = serve(token=TOKEN)
    token = page_token(server, "/board/issues/1")
    answer = call(server, "POST", "/api/issues/1/approve", headers=browser(server, token))
    assert answer.status == 200, answer.body
    assert answer.json()["said"].startswith("approved #1 (attempt 1): the merge gate is open")


def test_reject_takes_the_note_from_the_body_and_answers_the_cli_sentence(world, serve):
    accepted(world, 1)
    server = serve(token=TOKEN)
    path = "/api/issues/1/reject"
    missing = call(server, "POST", path, b"{}", headers=bearer(TOKEN))
    assert (missing.status, missing.json()["error"]) == (
        400,
        'body: give {"note": "what is wrong"} (the next attempt\'s brief)',
    )
    blank = call(server, "POST", path, json.dumps({"note": "  "}).encode(), headers=bearer(TOKEN))
    assert blank.status == 400 and blank.json()["error"].startswith("note: say what is wrong")
    body = json.dumps({"note": "the greeting is rude"}).encode()
    answer = call(server, "POST", path, body, headers=browser(server, page_token(server)))
    assert answer.status == 200, answer.body
    assert answer.json()["said"] == (
        "rejected attempt 1: #1 is sent back with your note: its next attempt carries it"
    )
    row = world.db.execute(
        "SELECT review_state, review_note FROM hive.queen_dispatch WHERE issue = 1"
    ).fetchone()
    assert row == ("sendback", "the greeting is rude")


def test_cancel_and_its_refusal_say_what_the_command_line_says(world, serve):
    add(world, 1)
    world.queue_order(1)
    server = serve(token=TOKEN)
    answer = call(server, "POST", "/api/issues/1/cancel", headers=bearer(TOKEN))
    assert answer.status == 200, answer.body
    assert answer.json()["said"].startswith("cancelled #1 (attempt 1): it was still queued")
    order = orders.get(world.db, 1)
    assert order is not None and order.outcome == "cancelled"
    again = call(server, "POST", "/api/issues/1/cancel", headers=bearer(TOKEN))
    assert again.status == 409
    cli = hive(world, "order", "cancel", "1")
    assert cli.returncode == 4
    assert one_line_error(cli) == f"hive: {again.json()['error']}"


def test_reopen_opens_a_closed_issue_and_refuses_an_open_one(world, serve):
    add(world, 1)
    server = serve(token=TOKEN)
    refused = call(server, "POST", "/api/issues/1/reopen", headers=bearer(TOKEN))
    assert (refused.status, refused.json()) == (409, {"error": "#1 is open already"})
    assert call(server, "POST", "/api/issues/1/close", headers=bearer(TOKEN)).status == 200
    answer = call(server, "POST", "/api/issues/1/reopen", headers=bearer(TOKEN))
    assert answer.status == 200, answer.body
    assert answer.json()["said"].startswith("reopened #1: ")
    assert state(world, 1) == "open"
