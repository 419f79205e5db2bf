"""The second half with real processes and real signals: reviewed, checked, merged into
the upstream repository's main and closed; a review stopped by SIGTERM is done again
later; a Queen killed mid-publish is replaced and the work lands exactly once. Every
result is judged with the git binary."""

from __future__ import annotations

import signal

import pytest

from hive.testing import git

from .harness import ISSUE_FILES, World

pytestmark = [pytest.mark.e2e, pytest.mark.live]

ALL_MERGED_SECONDS = 120.0
CHECK = {"HIVE_CHECK_OK": "true"}
# the job claim's clock, short: a dead Queen's publish job is free after it
JOB_CLAIM = "4"


def _merges_touching(world: World, path: str) -> int:
    return len(git("log", "--format=%H", "main", "--", path, cwd=world.upstream).split())


def test_two_runners_and_ten_issues_are_all_merged_and_none_is_lost(world: World) -> None:
    numbers = range(1, ISSUE_FILES + 1)
    for n in numbers:
        world.add_issue(n)
    world.queen(**CHECK)
    world.runner("runner-a", HIVE_RUNNER_SLOTS="3")
    world.runner("runner-b", HIVE_RUNNER_SLOTS="3")
    world.wait(lambda: all(world.merged(n) for n in numbers), ALL_MERGED_SECONDS, "all ten merged")
    git("fsck", "--strict", cwd=world.upstream)
    for n in numbers:
        text = git("show", f"main:files/f{n}.txt", cwd=world.upstream)
        assert f"issue {n} turn" in text, f"#{n}'s change is not on main"
        assert _merges_touching(world, f"files/f{n}.txt") == 2  # the sample commit, #n's
        assert (
            git("merge-base", "--is-ancestor", str(world.merged(n)), "main", cwd=world.upstream)
            == ""
        )


def test_sigterm_during_a_review_stops_it_and_the_row_is_reviewed_again_later(
    world: World,
) -> None:
    world.add_issue(1)
    started = world.ctl / "review.started"
    queen = world.queen(HIVE_REVIEWER_AGENT=f"command:touch {started}; exec sleep 600", **CHECK)
    world.runner("runner-a")
    world.wait(started.exists, 60, "the review to start")
    queen.send(signal.SIGTERM)
    assert world.exit_code(queen, 30) == 0
    order = world.order(1)
    assert order is not None and order.review_state is None and order.reviewed_at is None
    assert "stopped 1" in queen.tail(40), queen.tail(40)
    world.queen("queen-2", **CHECK)  # the demo reviewer
    world.wait(lambda: world.merged(1), 60, "#1 reviewed again and merged")


def test_a_queen_killed_mid_publish_is_replaced_and_the_work_lands_exactly_once(
    world: World,
) -> None:
    world.add_issue(1)
    started = world.ctl / "check.started"
    slow = {"HIVE_CHECK_OK": f"touch {started}; sleep 600"}
    queen = world.queen(**slow, HIVE_JOB_CLAIM_SECONDS=JOB_CLAIM)
    world.runner("runner-a")
    world.wait(started.exists, 60, "the publish job's check to start")
    queen.send(signal.SIGKILL)
    world.exit_code(queen, 10)
    # claims the job once the dead Queen's claim runs out
    world.queen("queen-2", **CHECK, HIVE_JOB_CLAIM_SECONDS=JOB_CLAIM)
    world.wait(lambda: world.merged(1), 150, "#1 merged by the second Queen")
    assert _merges_touching(world, "files/f1.txt") == 2
    assert git("rev-list", "--count", "main", cwd=world.upstream) == "2"
    git("fsck", "--strict", cwd=world.upstream)
