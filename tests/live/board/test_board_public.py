"""HIVE_BOARD_PUBLIC=on (DESIGN 11): /board answers without the token, read-only and with
the cards' numbers, titles and ages only; every other route still needs the token. Off
(the default), the board needs it like the rest."""

from __future__ import annotations

import pytest

from hive.store import runners, transcript
from tests.live.surface.conftest import TOKEN
from tests.unit.surface.helpers import bearer, call

from .acting import add
from .sse import basic

pytestmark = pytest.mark.live

SECRET_TITLE = "Rotate the signing key"


def seeded(world) -> None:
    add(world, 1, SECRET_TITLE, labels=("security",), body="the body is private")
    add(world, 2, "Runs now")
    order = world.queue_order(2)
    transcript.append(world.db, order.conversation_id, 2, "say", "a private transcript line")
    world.db.execute("UPDATE hive.queen_dispatch SET key_index = 0 WHERE issue = 2")
    runners.register(world.db, "runner-secret", 2)


def test_the_public_board_shows_numbers_titles_and_ages_and_nothing_else(world, serve):
    seeded(world)
    server = serve(token=TOKEN, board_public=True)
    page = call(server, "GET", "/board")
    assert page.status == 200
    text = page.body.decode()
    assert SECRET_TITLE in text and "#1" in text and "Runs now" in text
    assert 'data-cards="running"' in text and 'id="card-2"' in text
    assert "data-age" in text
    for hidden in (
        "security",  # labels
        "body is private",
        "transcript line",
        "runner-secret",
        "key 0",
        "dispatched",  # the last event's sentence
        "data-csrf",
        "data-act",
        "/board/issues/",
        "/board/events",
        "spent today",
    ):
        assert hidden not in text, hidden
    assert "script-src 'self'" in page.headers["Content-Security-Policy"]
    assert call(server, "GET", "/board/").status == 200
    assert call(server, "GET", "/board?column=running&q=runs").status == 200


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/"),
        ("GET", "/board/issues/1"),
        ("GET", "/board/issues/1/summary"),
        ("GET", "/board/issues/1/transcript"),
        ("GET", "/board/events"),
        ("GET", "/board/pulse"),
        ("GET", "/api/orders"),
        ("GET", "/api/issues/1"),
        ("GET", "/queen/export"),
        ("POST", "/api/issues/1/close"),
        ("POST", "/board"),
    ],
)
def test_every_other_route_still_needs_the_token(world, serve, method, path):
    seeded(world)
    server = serve(token=TOKEN, board_public=True)
    assert call(server, method, path).status == 401


def test_a_holder_of_the_token_gets_the_whole_board_and_signs_in_at_the_root(world, serve):
    seeded(world)
    server = serve(token=TOKEN, board_public=True)
    public = call(server, "GET", "/board").body.decode()
    assert '<a href="/">sign in</a>' in public  # / asks for the token: the browser keeps it
    signed_in = call(server, "GET", "/", headers=basic(TOKEN))
    assert (signed_in.status, signed_in.headers["Location"]) == (302, "/board")
    whole = call(server, "GET", "/board", headers=basic(TOKEN)).body.decode()
    assert "data-csrf" in whole and "runner-secret" in whole and "security" in whole
    assert call(server, "GET", "/board/static/board.css").status == 200


def test_off_the_board_needs_the_token(world, serve):
    seeded(world)
    server = serve(token=TOKEN)
    assert call(server, "GET", "/board").status == 401
    assert call(server, "GET", "/board/static/board.css").status == 401
    assert call(server, "GET", "/board", headers=bearer(TOKEN)).status == 200
