"""The Queen and the retry card against the real store: an issue whose attempts failed
(twice in a row: the first goes again at once) waits out its back-off, with one sentence
in the report; a handed-back one goes again at once; `finished` is no failure. The clock
moves by backdating `finished_at`."""

from __future__ import annotations

from hive.store import orders, reaping, reports
from tests.live.runtime.conftest import add_issue
from tests.live.runtime.test_queen import end_as, queen_of
from tests.live.store.conftest import backdate


def ended_ago(rt, issue: int, seconds: float) -> None:
    with rt.db.connection() as conn:
        backdate(conn, issue, "finished_at", seconds / 60.0)


def failures_of(rt, issue: int) -> int:
    order = orders.get(rt.db, issue)
    assert order is not None
    return order.failures_in_a_row


def fail_twice(rt, queen, issue: int, outcome: str) -> None:
    """Two failed attempts of `issue` in a row: the first goes again at once."""
    assert queen.run_once().dispatched == (issue,)
    end_as(rt, issue, outcome)
    assert queen.run_once().dispatched == (issue,)
    assert failures_of(rt, issue) == 1
    end_as(rt, issue, outcome)


def test_an_issue_that_keeps_ending_badly_waits_out_its_back_off_then_goes_again(make_runtime):
    rt = make_runtime(QUEEN_BEES_RUN_ELSEWHERE="on")
    add_issue(rt.db, 7)
    queen = queen_of(rt)
    fail_twice(rt, queen, 7, "ended badly")
    waited = queen.run_once()
    assert waited.dispatched == ()
    [(number, reason)] = waited.skipped
    assert number == 7
    assert reason.endswith("s more: its last 2 attempts failed (the last: ended badly)")
    assert "#7: waits " in reports.latest(rt.db, 1)[0].body
    ended_ago(rt, 7, 61)  # past its minute
    assert queen.run_once().dispatched == (7,)
    assert failures_of(rt, 7) == 2
    assert orders.claim(rt.db, "r1") is not None  # then the two-hour rule reaps it
    with rt.db.connection() as conn:
        backdate(conn, 7, "dispatched_at", 121)
    assert [o.issue for o in reaping.reap_stalled_turns(rt.db, 120).ended] == [7]
    ended_ago(rt, 7, 61)  # the third failure in a row waits 120 s
    again = queen.run_once()
    assert again.dispatched == ()
    [(_, reason)] = again.skipped
    assert reason.startswith(("waits 59 s more", "waits 58 s more"))
    assert reason.endswith("3 attempts failed (the last: reaped: no completion within 120 minutes)")
    ended_ago(rt, 7, 60)
    assert queen.run_once().dispatched == (7,)
    assert failures_of(rt, 7) == 3


def test_a_handed_back_issue_goes_again_at_once_even_after_failures(make_runtime):
    rt = make_runtime(QUEEN_BEES_RUN_ELSEWHERE="on")
    add_issue(rt.db, 4)
    queen = queen_of(rt)
    fail_twice(rt, queen, 4, "ended unexpectedly")
    ended_ago(rt, 4, 61)
    assert queen.run_once().dispatched == (4,)
    end_as(rt, 4, "handed back")  # the drain took it: its issue is free at once
    assert queen.run_once().dispatched == (4,)
    assert failures_of(rt, 4) == 0


def test_a_finished_attempt_is_no_failure_and_ends_a_run_of_them(make_runtime):
    rt = make_runtime(QUEEN_BEES_RUN_ELSEWHERE="on")
    add_issue(rt.db, 5)
    queen = queen_of(rt)
    fail_twice(rt, queen, 5, "reaped: runner silent")
    ended_ago(rt, 5, 61)
    assert queen.run_once().dispatched == (5,)
    end_as(rt, 5, "finished")
    with rt.db.connection() as conn:  # its criteria changed: the work is stale, free again
        conn.execute("UPDATE hive.queen_dispatch SET review_state = 'stale' WHERE issue = 5")
    assert queen.run_once().dispatched == (5,)
    assert failures_of(rt, 5) == 0
