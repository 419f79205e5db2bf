"""The board's pages under hostile data (issue 25, item 9): the transcript part carries
the same security headers as every page, and an issue's body keeps its line breaks while
its control characters stay escaped."""

from __future__ import annotations

from hive.store import issues, transcript
from hive.store.issues import NewIssue
from tests.unit.surface.helpers import call

SECURITY_HEADERS = ("Content-Security-Policy", "X-Content-Type-Options", "Referrer-Policy")


def test_the_transcript_part_carries_the_same_security_headers_as_the_pages(world, serve):
    issues.upsert(world.db, 8, NewIssue(title="followed"))
    order = world.queue_order(8)
    transcript.append(world.db, order.conversation_id, 8, "stdout", "<script>x</script>")
    server = serve()
    page = call(server, "GET", "/board/issues/8")
    part = call(server, "GET", "/board/issues/8/transcript")
    assert part.status == 200 and "&lt;script&gt;" in part.body.decode()
    for name in SECURITY_HEADERS:
        assert part.headers[name] == page.headers[name], name
    assert "frame-ancestors 'none'" in part.headers["Content-Security-Policy"]
    assert part.headers["X-Content-Type-Options"] == "nosniff"


def test_the_board_s_pulse_part_carries_the_pages_security_headers(world, serve):
    server = serve()
    page = call(server, "GET", "/board")
    pulse = call(server, "GET", "/board/pulse")
    assert pulse.status == 200
    for name in SECURITY_HEADERS:
        assert pulse.headers[name] == page.headers[name], name


def test_an_issue_body_keeps_its_line_breaks_and_escapes_the_rest(world, serve):
    body = "First line.\n\n## Boundary\n- `a.py`\n\tindented\x1b[2J"
    issues.upsert(world.db, 9, NewIssue(title="lines", body=body))
    server = serve()
    text = call(server, "GET", "/board/issues/9").body.decode()
    shown = text[text.index('<pre class="body">') :]
    assert shown.startswith(
        '<pre class="body">First line.\n\n## Boundary\n- `a.py`\n\tindented\\x1b[2J</pre>'
    )


def test_two_thousand_open_issues_make_a_bounded_board(world, serve):
    world.db.execute(
        "INSERT INTO hive.queen_issue (number, title, labels) "
        "SELECT n, 'issue ' || n || repeat(' words', 20), ARRAY['hive', 'P2'] "
        "FROM generate_series(1, 2000) AS n"
    )
    server = serve()
    page = call(server, "GET", "/board")
    assert page.status == 200
    text = page.body.decode()
    assert len(page.body) < 250_000, len(page.body)  # 1,753 KB before, 177 KB now
    from hive.services.board import CARDS_PER_COLUMN_MAX

    assert text.count('class="card col-backlog"') == CARDS_PER_COLUMN_MAX
    assert f"the first {CARDS_PER_COLUMN_MAX} of 2000" in text
    assert 'data-issue="1"' in text and 'data-issue="2000"' not in text
