"""GET /queen/export and /queen/export/<issue> on a real checkout, a real database and
the real git binary as the judge of every bundle served."""

from __future__ import annotations

import pytest

from hive.rules.states import Outcome
from tests.unit.surface.helpers import bearer, call

from .conftest import TOKEN

pytestmark = pytest.mark.live


def test_a_branch_in_the_checkout_is_served_as_a_bundle_git_fetch_accepts(world, serve):
    head = world.commit_on("queen-7", "fix.txt", "fixed\n")
    world.branch_into_checkout("queen-7")
    answer = call(serve(), "GET", "/queen/export/7")
    assert answer.status == 200, answer.body
    assert answer.headers["X-Hive-Bundle-Source"] == "checkout"
    assert answer.headers["ETag"] == f'"{head}"'
    assert answer.headers["Content-Disposition"] == 'attachment; filename="queen-7.bundle"'
    assert world.fetch_bundle(answer.body, "queen-7") == head


def test_a_branch_only_in_the_table_is_served_from_queen_bundle(world, serve):
    head = world.commit_on("queen-8", "other.txt", "other\n")
    assert world.store_bundle(8, "queen-8") == head
    answer = call(serve(), "GET", "/queen/export/8")
    assert answer.status == 200, answer.body
    assert answer.headers["X-Hive-Bundle-Source"] == "table"
    assert answer.headers["ETag"] == f'"{head}"'
    assert world.fetch_bundle(answer.body, "queen-8") == head


def test_the_checkout_wins_over_the_table(world, serve):
    world.commit_on("queen-9", "a.txt", "a\n")
    world.store_bundle(9, "queen-9")
    newer = world.commit_on("queen-9", "b.txt", "b\n")
    world.branch_into_checkout("queen-9")
    answer = call(serve(), "GET", "/queen/export/9")
    assert answer.headers["X-Hive-Bundle-Source"] == "checkout"
    assert world.fetch_bundle(answer.body, "queen-9") == newer


def test_a_matching_etag_is_304_without_a_body(world, serve):
    head = world.commit_on("queen-7", "fix.txt", "fixed\n")
    world.branch_into_checkout("queen-7")
    server = serve()
    answer = call(server, "GET", "/queen/export/7", headers={"If-None-Match": f'"{head}"'})
    assert (answer.status, answer.body) == (304, b"")
    assert answer.headers["ETag"] == f'"{head}"'
    stale = call(server, "GET", "/queen/export/7", headers={"If-None-Match": '"0000"'})
    assert stale.status == 200


def test_an_issue_nothing_is_known_of_is_404(world, serve):
    answer = call(serve(), "GET", "/queen/export/12345")
    assert answer.status == 404
    assert "nothing is known of issue 12345" in answer.json()["error"]


def test_an_order_still_running_is_404_saying_so(world, serve):
    world.queue_order(5)
    answer = call(serve(), "GET", "/queen/export/5")
    assert answer.status == 404
    assert "still running" in answer.json()["error"]


def test_a_branch_at_base_is_409(world, serve):
    git_branch_at_base(world, "queen-3")
    answer = call(serve(), "GET", "/queen/export/3")
    assert answer.status == 409
    assert "no commits beyond main" in answer.json()["error"]


def test_an_order_that_ended_without_a_bundle_is_409(world, serve):
    from hive.store import endings, orders

    order = world.queue_order(4)
    orders.claim(world.db, "runner-1")
    assert endings.end(
        world.db,
        endings.OrderEnding(orders.Fence(4, order.conversation_id, "runner-1"), Outcome.FINISHED),
    )
    answer = call(serve(), "GET", "/queen/export/4")
    assert answer.status == 409
    assert "ended (finished) with no commits beyond base" in answer.json()["error"]


@pytest.mark.parametrize("issue", ["abc", "-1", "0", "2147483648"])
def test_a_bad_issue_is_400_before_any_lookup(world, serve, issue):
    assert call(serve(), "GET", f"/queen/export/{issue}").status == 400


def test_the_export_needs_the_token_when_one_is_set(world, serve):
    world.commit_on("queen-7", "fix.txt", "fixed\n")
    world.branch_into_checkout("queen-7")
    server = serve(token=TOKEN)
    assert call(server, "GET", "/queen/export/7").status == 401
    assert call(server, "GET", "/queen/export").status == 401
    assert call(server, "GET", "/queen/export/7", headers=bearer(TOKEN)).status == 200


def test_the_listing_names_branches_with_work_from_both_places(world, serve):
    here = world.commit_on("queen-7", "fix.txt", "fixed\n")
    world.branch_into_checkout("queen-7")
    stored = world.commit_on("queen-8", "other.txt", "other\n")
    world.store_bundle(8, "queen-8")
    git_branch_at_base(world, "queen-3")
    answer = call(serve(), "GET", "/queen/export")
    assert answer.status == 200
    listed = {row["issue"]: row for row in answer.json()}
    assert set(listed) == {7, 8}
    assert (listed[7]["source"], listed[7]["head_sha"], listed[7]["commits"]) == (
        "checkout",
        here,
        1,
    )
    assert listed[7]["changed_files"] == ["fix.txt"]
    assert (listed[8]["source"], listed[8]["head_sha"]) == ("table", stored)
    assert listed[8]["export"] == "/queen/export/8"


def git_branch_at_base(world, branch: str) -> None:
    from .conftest import git

    git("branch", "-f", branch, "main", cwd=world.upstream)
    world.branch_into_checkout(branch)


def test_a_branch_at_base_here_gives_way_to_the_runners_bundle(world, serve):
    git_branch_at_base(world, "queen-6")
    head = world.commit_on("queen-6", "work.txt", "work\n")
    world.store_bundle(6, "queen-6")
    answer = call(serve(), "GET", "/queen/export/6")
    assert answer.status == 200
    assert answer.headers["X-Hive-Bundle-Source"] == "table"
    assert world.fetch_bundle(answer.body, "queen-6") == head
