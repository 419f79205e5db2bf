"""GET /api/issues/<n>, POST /api/issues/<n>/approve and /close over loopback, on the real
database, behind the token like the rest of the API."""

from __future__ import annotations

import pytest

from hive.store import issues, orders
from tests.unit.surface.helpers import bearer, call, post_json

from .conftest import TOKEN

pytestmark = pytest.mark.live


def accepted(world, issue: int) -> None:
    """Issue `issue` with finished work the reviewer accepted."""
    world.store_bundle(issue, world_branch(world, issue))
    world.db.execute(
        "UPDATE hive.queen_dispatch SET review_state = 'accept', reviewed_at = now()"
        " WHERE issue = %s",
        (issue,),
    )


def world_branch(world, issue: int) -> str:
    branch = f"queen-{issue}"
    world.commit_on(branch, f"f{issue}.txt", "work\n")
    return branch


def add_issue(server, title: str = "Greet") -> int:
    made = post_json(server, "/api/issues", {"title": title, "boundary": ["a.txt"]}, token=TOKEN)
    assert made.status == 201
    return int(made.json()["number"])


def test_the_location_of_a_new_issue_resolves_to_the_issue(world, serve):
    server = serve(token=TOKEN)
    made = post_json(server, "/api/issues", {"title": "Greet", "criteria": ["c"]}, token=TOKEN)
    location = made.headers["Location"]
    answer = call(server, "GET", location, headers=bearer(TOKEN))
    assert answer.status == 200
    seen = answer.json()
    assert (seen["number"], seen["title"], seen["criteria"], seen["order"]) == (
        1,
        "Greet",
        ["c"],
        None,
    )
    assert (seen["checks"], seen["job"], seen["closed_reason"]) == ([], None, None)


def test_an_issue_shows_its_order_state_by_name(world, serve):
    server = serve(token=TOKEN)
    number = add_issue(server)
    world.queue_order(number)
    order = call(server, "GET", f"/api/issues/{number}", headers=bearer(TOKEN)).json()["order"]
    assert (order["state"], order["attempt"], order["stands"]) == (
        "running",
        1,
        f"#{number} is queued for a runner (attempt 1)",
    )


@pytest.mark.parametrize(
    ("method", "path"),
    [("GET", "/api/issues/1"), ("POST", "/api/issues/1/approve"), ("POST", "/api/issues/1/close")],
)
def test_the_issue_routes_need_the_token(world, serve, method, path):
    server = serve(token=TOKEN)
    add_issue(server)
    answer = call(server, method, path)
    assert answer.status == 401
    assert answer.headers["WWW-Authenticate"] == 'Bearer realm="hive"'
    stored = issues.get(world.db, 1)
    assert stored is not None and stored.state == "open"


@pytest.mark.parametrize(
    ("path", "status", "error"),
    [
        ("/api/issues/7", 404, "no issue #7"),
        ("/api/issues/seven", 400, "issue 'seven' is not a positive integer up to 2147483647"),
        ("/api/issues/0", 400, "issue '0' is not a positive integer up to 2147483647"),
        ("/api/issues/1/merge", 404, "no route /api/issues/1/merge"),
    ],
)
def test_an_unknown_or_malformed_issue_is_answered_plainly(world, serve, path, status, error):
    server = serve(token=TOKEN)
    add_issue(server)
    answer = call(server, "GET", path, headers=bearer(TOKEN))
    assert (answer.status, answer.json()) == (status, {"error": error})


def test_approve_opens_the_gate_of_accepted_work(world, serve):
    server = serve(token=TOKEN)
    number = add_issue(server)
    accepted(world, number)
    answer = call(server, "POST", f"/api/issues/{number}/approve", headers=bearer(TOKEN))
    assert answer.status == 200, answer.body
    assert answer.json()["approved_by"] == "a holder of the API token"
    order = orders.get(world.db, number)
    assert order is not None
    row = world.db.execute(
        "SELECT approved_by FROM hive.queen_dispatch WHERE issue = %s", (number,)
    ).fetchone()
    assert row == ("a holder of the API token",)


def test_approve_of_work_not_accepted_is_a_conflict_naming_its_state(world, serve):
    server = serve(token=TOKEN)
    number = add_issue(server)
    world.queue_order(number)
    answer = call(server, "POST", f"/api/issues/{number}/approve", headers=bearer(TOKEN))
    assert answer.status == 409
    assert answer.json()["error"].startswith(f"#{number} is queued for a runner (attempt 1): ")
    assert "cannot approve it" in answer.json()["error"]


def test_approve_is_a_post(world, serve):
    server = serve(token=TOKEN)
    add_issue(server)
    answer = call(server, "GET", "/api/issues/1/approve", headers=bearer(TOKEN))
    assert (answer.status, answer.headers["Allow"]) == (405, "POST")


def test_close_closes_by_hand_and_cancels_the_order_in_flight(world, serve):
    server = serve(token=TOKEN)
    number = add_issue(server)
    world.queue_order(number)
    # a body is read and dropped: the connection stays usable
    answer = post_json(server, f"/api/issues/{number}/close", {"why": "x"}, token=TOKEN)
    assert answer.status == 200, answer.body
    assert (answer.json()["state"], answer.json()["cancelled_attempt"]) == ("closed", 1)
    seen = call(server, "GET", f"/api/issues/{number}", headers=bearer(TOKEN)).json()
    assert (seen["state"], seen["closed_reason"]) == ("closed", "closed by hand")
    assert (seen["order"]["state"], seen["order"]["outcome"]) == ("reaped", "cancelled")
    again = call(server, "POST", f"/api/issues/{number}/close", headers=bearer(TOKEN))
    assert (again.status, again.json()) == (
        409,
        {"error": f"#{number} is closed already (closed by hand)"},
    )
