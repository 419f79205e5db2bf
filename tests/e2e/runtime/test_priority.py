"""Who goes next, live (RULES 5; seeds module 2): labelled issues on a real Queen and a
real runner start in priority order, a fourth critical runs as high (at most three run as
critical), and finished work that waits for review starts nothing new: its issue gets no
new order and its files stay held from another issue until it is merged."""

from __future__ import annotations

from datetime import datetime

import pytest

from hive.store import issues
from hive.store.issues import NewIssue

from .harness import World

pytestmark = [pytest.mark.e2e, pytest.mark.live]

SLOTS = "4"
# number: (labels, the file its boundary names)
ISSUES: dict[int, tuple[tuple[str, ...], int]] = {
    1: (("P3",), 1),  # low
    2: ((), 2),  # normal (no label)
    3: (("P0",), 3),  # critical
    4: (("P1",), 4),  # high
    5: (("priority/critical",), 5),  # critical
    6: (("critical",), 6),  # critical
    7: (("P0",), 7),  # the fourth critical: runs as high, after the real high #4
    8: (("P1",), 3),  # high, but on #3's file: held while #3's work waits for review
}


def _add(world: World, n: int) -> None:
    labels, f = ISSUES[n]
    issues.upsert(
        world.db,
        n,
        NewIssue(
            title=f"Change file {f} ({n})",
            body=f"Add a line to files/f{f}.txt.",
            labels=labels,
            boundary=(f"files/f{f}.txt",),
            criteria=(f"file `files/f{f}.txt` contains `issue {n} turn`",),
        ),
    )


def _queued(world: World) -> dict[int, datetime]:
    """Each issue's first attempt's queueing time, for those queued so far."""
    found: dict[int, datetime] = {}
    for n in ISSUES:
        order = world.order(n)
        if order is not None and order.attempt == 1 and order.queued_at is not None:
            found[n] = order.queued_at
        for past in world.history(n):
            if past["attempt"] == 1 and past.get("queued_at") is not None:
                found[n] = past["queued_at"]
    return found


def _awaits_review(world: World, n: int) -> bool:
    order = world.ended(n)
    return order is not None and order.attempt == 1 and order.review_state is None


def test_labelled_issues_start_by_priority_with_the_critical_cap_and_the_review_hold(
    world: World,
) -> None:
    hold_reviews = world.ctl / "review.hold"
    hold_reviews.touch()
    for n in ISSUES:
        world.hold(n)
        _add(world, n)
    reviewer = (
        f'command:while [ -e "{hold_reviews}" ]; do sleep 0.05; done; echo "HIVE-CRITERION: 1 met"'
    )
    world.queen(HIVE_MAX_WORKERS=SLOTS, HIVE_REVIEWER_AGENT=reviewer, HIVE_CHECK_OK="true")
    world.runner("runner-a", HIVE_RUNNER_SLOTS=SLOTS)

    # the first round fills the four places: the three criticals, then the real high #4
    # ahead of the fourth critical #7, which runs as high (a later number)
    world.wait(lambda: len(_queued(world)) >= 4 or None, 60, "the first four to start")
    assert set(_queued(world)) == {3, 4, 5, 6}, world.report()

    # #4 finishes and waits for review: no new order for it; its place goes to #7
    world.release(4)
    world.wait(lambda: 7 in _queued(world) or None, 60, "#7 to start in #4's place")
    assert _awaits_review(world, 4), world.report()
    assert set(_queued(world)) == {3, 4, 5, 6, 7}

    # #3 finishes and waits for review: its file stays held, so the high #8 on that file
    # does not start and the normal #2 takes the place
    world.release(3)
    world.wait(lambda: 2 in _queued(world) or None, 60, "#2 to start in #3's place")
    assert _awaits_review(world, 3), world.report()
    assert 8 not in _queued(world) and 1 not in _queued(world), world.report()

    # the reviews run, #3 and #4 merge; the next free place goes to the high #8, not #1
    hold_reviews.unlink()
    world.wait(lambda: world.merged(3) and world.merged(4), 90, "#3 and #4 merged")
    assert 8 not in _queued(world), "the four places were full"
    world.release(5)
    world.wait(lambda: 8 in _queued(world) or None, 60, "#8 to start once #3 merged")
    assert 1 not in _queued(world), world.report()

    for n in ISSUES:
        world.release(n)
    world.wait(lambda: all(world.merged(n) for n in ISSUES), 120, "all eight merged")
    started = sorted(_queued(world).items(), key=lambda item: item[1])
    assert [n for n, _ in started][4:] == [7, 2, 8, 1], started
    for n in ISSUES:
        assert len(world.turns(n)) == 1, f"#{n} ran {len(world.turns(n))} turns"
