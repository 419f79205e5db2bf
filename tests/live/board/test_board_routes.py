"""The board over real HTTP on a real store: its pages behind the token, its event
stream fed by the store's NOTIFYs, catching up after a reconnect, and its limits."""

from __future__ import annotations

import json
import uuid

from hive.store import issues, orders, transcript
from hive.store.issues import NewIssue
from tests.live.surface.conftest import TOKEN
from tests.unit.surface.helpers import bearer, call

from .sse import Stream, basic


def add(world, n: int, title: str | None = None, **fields) -> None:
    issues.upsert(world.db, n, NewIssue(title=title or f"issue {n}", **fields))


def card(event) -> dict:
    assert event.name == "card", event
    return json.loads(event.data)


def test_the_board_asks_a_browser_for_basic_auth_and_takes_the_token_as_password(world, serve):
    server = serve(token=TOKEN)
    refused = call(server, "GET", "/board")
    assert refused.status == 401
    assert refused.headers.get_all("WWW-Authenticate")[0].startswith("Basic ")
    assert call(server, "GET", "/board", headers=basic(TOKEN + "x")).status == 401
    assert call(server, "GET", "/board", headers=basic(TOKEN)).status == 200
    assert call(server, "GET", "/board", headers=bearer(TOKEN)).status == 200
    # an API read takes Basic too; a write with it needs the page's origin and CSRF token
    # (another site's form could post it): test_board_writes
    assert call(server, "GET", "/api/orders", headers=basic(TOKEN)).status == 200
    post = call(server, "POST", "/api/issues", b'{"title": "t"}', headers=basic(TOKEN))
    assert post.status == 403
    assert issues.get(world.db, 1) is None


def test_the_board_shows_six_columns_with_each_issue_in_its_own(world, serve):
    add(world, 1, "<b>idle</b>")
    add(world, 2, "waits on one", blocked_by=(1,))
    add(world, 3, "in flight")
    world.queue_order(3)
    server = serve()
    page = call(server, "GET", "/board")
    assert page.status == 200
    assert page.headers["Content-Type"].startswith("text/html")
    assert "script-src 'self'" in page.headers["Content-Security-Policy"]
    text = page.body.decode()
    for name in ("backlog", "blocked", "running", "review", "done", "dropped"):
        assert f'data-cards="{name}"' in text
    assert "&lt;b&gt;idle&lt;/b&gt;" in text and "<b>idle" not in text
    assert 'class="card col-backlog" data-sort="1.000" data-issue="1"' in text
    assert 'class="card col-blocked"' in text and "blocked by #1" in text
    assert 'class="card col-running"' in text and "queued" in text


def test_its_script_and_stylesheet_are_served_with_their_hash(world, serve):
    server = serve()
    text = call(server, "GET", "/board").body.decode()
    for name in ("board.js", "board.css"):
        start = text.index(f"/board/static/{name}?v=")
        url = text[start : text.index('"', start)]
        answer = call(server, "GET", url)
        assert answer.status == 200
        etag = answer.headers["ETag"]
        assert etag.strip('"') in url
        assert call(server, "GET", url, headers={"If-None-Match": etag}).status == 304
    assert call(server, "GET", "/board/static/nope.js").status == 404
    assert call(server, "GET", "/").headers["Location"] == "/board"


def test_a_new_order_reaches_an_open_stream_as_its_card_moving(world, serve):
    add(world, 5)
    server = serve(token=TOKEN)
    stream = Stream(server.port, "/board/events", basic(TOKEN))
    try:
        assert stream.status == 200
        assert stream.headers["content-type"].startswith("text/event-stream")
        snapshot = stream.next()
        assert snapshot.name == "snapshot"
        assert "card-5" in json.loads(snapshot.data)["columns"]["backlog"]
        world.queue_order(5)
        moved = card(stream.until(lambda e: e.name == "card"))
        assert (moved["issue"], moved["column"]) == (5, "running")
        add(world, 6, "brand new")
        new = card(stream.until(lambda e: e.name == "card" and '"issue": 6' in e.data))
        assert new["column"] == "backlog" and "brand new" in new["html"]
    finally:
        stream.close()


def test_a_blockers_close_moves_the_issue_it_blocked(world, serve):
    add(world, 1)
    add(world, 2, blocked_by=(1,))
    server = serve()
    stream = Stream(server.port, "/board/events")
    try:
        stream.next()  # the snapshot
        issues.set_state(world.db, 1, "closed")
        seen = {}
        while set(seen) != {1, 2}:
            data = card(stream.until(lambda e: e.name == "card"))
            seen[data["issue"]] = data["column"]
        assert seen == {1: "dropped", 2: "backlog"}
    finally:
        stream.close()


def test_a_reconnect_with_last_event_id_gets_what_it_missed_and_a_stranger_a_snapshot(world, serve):
    add(world, 7)
    server = serve()
    first = Stream(server.port, "/board/events")
    first.next()
    add(world, 7, "renamed once")
    card(first.until(lambda e: e.name == "card"))
    seen = first.last_id
    first.close()
    add(world, 7, "renamed twice")  # while no stream is open
    # replayed if the hub had it before the reconnect, else sent live: the next event
    again = Stream(server.port, "/board/events", {"Last-Event-ID": seen})
    try:
        missed = again.next()
        assert missed.name == "card" and "renamed twice" in missed.data
    finally:
        again.close()
    stranger = Stream(server.port, "/board/events", {"Last-Event-ID": "beef.3"})
    try:
        assert stranger.next().name == "snapshot"
    finally:
        stranger.close()
    junk = Stream(server.port, "/board/events?since=not-an-id")
    try:
        assert junk.next().name == "snapshot"
    finally:
        junk.close()


def test_an_issue_page_is_told_when_its_issue_or_transcript_changes(world, serve):
    add(world, 8, "followed")
    order = world.queue_order(8)
    server = serve()
    page = call(server, "GET", "/board/issues/8")
    assert page.status == 200 and "followed" in page.body.decode()
    text = page.body.decode()
    start = text.index('data-after="') + len('data-after="')
    after = text[start : text.index('"', start)]
    stream = Stream(server.port, "/board/events?issue=8")
    try:
        transcript.append(world.db, order.conversation_id, 8, "say", "hello <there>")
        assert stream.until(lambda e: e.name == "transcript").data == "8"
        lines = call(server, "GET", f"/board/issues/8/transcript?after={after}")
        assert "hello &lt;there&gt;" in lines.body.decode()
        cursor = lines.headers["X-Hive-After"]
        assert cursor == f"{order.conversation_id}:1"
        again = call(server, "GET", f"/board/issues/8/transcript?after={cursor}")
        assert again.status == 200 and again.body == b""
        add(world, 8, "followed, renamed")
        assert stream.until(lambda e: e.name == "issue").data == "8"
        summary = call(server, "GET", "/board/issues/8/summary")
        assert summary.status == 200 and "queued for a runner" in summary.body.decode()
    finally:
        stream.close()


def test_bad_board_paths_and_queries_are_clear_answers(world, serve):
    server = serve()
    assert call(server, "GET", "/board/issues/999").status == 404
    assert call(server, "GET", "/board/issues/abc").status == 400
    assert call(server, "GET", "/board/nothing").status == 404
    bad = call(server, "GET", "/board/issues/1/transcript?after=zz:1")
    assert bad.status in (400, 404)
    add(world, 1)
    bad = call(server, "GET", "/board/issues/1/transcript?after=zz:1")
    assert bad.status == 400 and "after" in bad.json()["error"]
    assert call(server, "GET", f"/board/issues/1/transcript?after={uuid.uuid4()}:x").status == 400
    unknown = call(server, "GET", "/board?color=red")
    assert unknown.status == 400 and "color" in unknown.json()["error"]
    twice = call(server, "GET", "/board/events?issue=1&issue=2")
    assert twice.status == 400
    assert call(server, "POST", "/board").status == 405
    head = call(server, "HEAD", "/board/events")
    assert head.status == 200 and head.body == b""


def test_the_order_listing_still_answers_on_a_store_with_the_board_triggers(world, serve):
    add(world, 9)
    world.queue_order(9)
    assert orders.claim(world.db, "runner-1") is not None
    server = serve()
    assert [o["issue"] for o in call(server, "GET", "/api/orders").json()] == [9]


def test_an_issue_page_shows_attempts_verdicts_checks_spend_and_the_bundle(world, serve):
    add(world, 11, "judged work")
    world.commit_on("queen-11", "new.txt", "work\n")
    head = world.store_bundle(11, "queen-11")  # attempt 1 ended finished, bundle stored
    world.db.execute(
        "UPDATE hive.queen_dispatch SET review_state = 'sendback', reviewed_at = now(),"
        " review_note = 'criterion 1 unmet: <no test>', cost_usd = 0.25,"
        " input_tokens = 1200, output_tokens = 300 WHERE issue = 11"
    )
    world.db.execute(
        "INSERT INTO hive.queen_check (issue, attempt, name, result, exit_code, output_tail)"
        " VALUES (11, 1, 'syntax', 'fail', 1, 'line one\nE   boom')"
    )
    server = serve()
    text = call(server, "GET", "/board/issues/11").body.decode()
    assert "sent back" in text and "criterion 1 unmet: &lt;no test&gt;" in text
    assert "1200 tokens in, 300 out, $0.25 over 1 attempt" in text
    assert 'class="result-fail">fail' in text and "E   boom" in text
    assert '<a href="/queen/export/11" download>' in text and head[:12] in text
    assert "attempt 1 ended finished" in text  # the Queen's sentences
    bundle = call(server, "GET", "/queen/export/11")
    assert bundle.status == 200 and world.fetch_bundle(bundle.body, "queen-11") == head
