"""Hostile bodies against the real database: a NUL, a lone surrogate, anything at all is
a 201 or a 400 naming a field, never a 500 and never a traceback (issue 14)."""

from __future__ import annotations

import json
import os

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from hive.store import issues
from tests.live.surface.test_commands import hive, one_line_error
from tests.unit.surface.helpers import call, post_json
from tests.unit.surface.test_http_properties import FIELDS, Faults, issue_bodies

pytestmark = pytest.mark.live


def one_server(world, serve):
    """One server for every example hypothesis draws (the fixtures run once per test)."""
    if not hasattr(world, "server"):
        world.server = serve()
    return world.server


@pytest.mark.parametrize("field", ["title", "body", "labels", "boundary", "criteria"])
def test_a_nul_in_any_field_is_400_and_nothing_is_stored(world, serve, field):
    server = serve()
    value = "a\x00b"
    issue = {"title": "t", field: [value] if field in ("labels", "boundary", "criteria") else value}
    with Faults() as faults:
        answer = post_json(server, "/api/issues", issue)
    assert answer.status == 400
    assert answer.json()["error"].startswith(field)
    assert issues.listing(world.db) == []
    assert faults.found == []


def test_an_escape_sequence_is_never_stored(world, serve):
    server = serve()
    answer = post_json(server, "/api/issues", {"title": "\x1b]0;owned\x07 hi"})
    assert answer.status == 400
    assert issues.listing(world.db) == []


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(issue=issue_bodies)
@example(issue={"title": "a\ud83d\ude00b"})  # a pair of lone surrogates, drawn side by side
def test_any_body_is_stored_or_refused_naming_a_field(world, serve, issue):
    server = one_server(world, serve)
    body = json.dumps(issue)
    with Faults() as faults:
        answer = call(server, "POST", "/api/issues", body.encode())
    assert answer.status in (201, 400), answer.body
    if answer.status == 400:
        assert answer.json()["error"].split(":")[0].split("[")[0] in (*FIELDS, "body")
    else:
        stored = issues.get(world.db, answer.json()["number"])
        # what the server read: a high surrogate drawn right before a low one is, in
        # JSON's "\ud83d\ude00", one character (the pair joined)
        sent = json.loads(body)["title"]
        assert stored is not None and stored.title == sent.strip()
    assert faults.found == []


@given(text=st.text(max_size=30))
@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
def test_any_issue_or_export_path_is_a_clear_answer(world, serve, text):
    server = one_server(world, serve)
    tail = "".join(c if 33 <= ord(c) < 127 else "%20" for c in text)
    with Faults() as faults:
        for method, target in (
            ("GET", f"/queen/export/{tail}"),
            ("GET", f"/api/issues/{tail}"),
            ("POST", f"/api/issues/{tail}/approve"),
            ("POST", f"/api/issues/{tail}/close"),
            ("GET", f"/board/issues/{tail}"),
            ("GET", f"/board/issues/{tail}/summary"),
            ("GET", f"/board/issues/1/transcript?after={tail}"),
            ("GET", f"/board/static/{tail}"),
            ("GET", f"/api/orders?{tail}"),
        ):
            answer = call(server, method, target)
            assert answer.status in (200, 400, 404, 405, 409), (target, answer.body)
    assert faults.found == []


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (["--title", "a\x1b[31mred"], "title"),
        (["--title", "one\ntwo"], "title"),
        (["--title", "one\u2028two"], "title"),
        (["--title", "t", "--body", "x\ry"], "body"),
        (["--title", "t", "--body", "x\x07y"], "body"),
        (["--title", "t", "--label", "l\u202e"], "labels[0]"),
        (["--title", "t", "--boundary", "src/a\nb.py"], "boundary[0]"),
        (["--title", "t", "--criterion", "c\x1b]0;x\x07"], "criteria[0]"),
        (["--title", os.fsdecode(b"bad \xff\xfe bytes")], "title"),
    ],
)
def test_issue_add_from_the_command_line_refuses_control_characters(world, args, field):
    done = hive(world, "issue", "add", *args)
    assert done.returncode == 2, done.stdout
    line = one_line_error(done)
    assert line.startswith(f"hive: {field}:") and "\x1b" not in line and "\u202e" not in line
    assert "Traceback" not in done.stderr.decode() and issues.listing(world.db) == []


def test_a_row_written_before_the_door_is_listed_escaped(world):
    with world.db.cursor() as cur:
        cur.execute(
            "INSERT INTO hive.queen_issue (number, title, labels) VALUES (1, %s, %s)",
            ("a\x1b[2J\u202eb\u2028c", ["l\x1b[0m"]),
        )
    done = hive(world, "issue", "list")
    assert done.returncode == 0, done.stderr
    out = done.stdout.decode()
    assert "\\x1b[2J\\u202eb\\u2028c" in out
    assert "\x1b" not in out and "\u202e" not in out and "\u2028" not in out
