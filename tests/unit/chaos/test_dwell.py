"""How long each issue sat still in one place (`hive chaos --loop`): places from the
order's state, the longest stillness (an issue is still while neither it nor its place
moves), and the bound each place has."""

from __future__ import annotations

from hive.chaos.dwell import (
    ESCALATED_PLACE,
    MERGED_PLACE,
    PUBLISH_PLACE,
    QUEUED_PLACE,
    REVIEW_PLACE,
    RUNNING_PLACE,
    WAITING_PLACE,
    Dwell,
    place_of,
    sat_within_bounds,
)
from hive.rules.states import ACCEPT, ENDED, ESCALATE, RUNNING, SENDBACK, WAIT

BOUNDS = {QUEUED_PLACE: 30.0, RUNNING_PLACE: 30.0, REVIEW_PLACE: 20.0, PUBLISH_PLACE: 10.0}


def test_each_state_has_its_place():
    assert place_of(None, False, False) == WAITING_PLACE
    assert place_of(SENDBACK, False, False) == WAITING_PLACE
    assert place_of(RUNNING, False, False) == RUNNING_PLACE
    assert place_of(RUNNING, False, False, queued=True) == QUEUED_PLACE
    assert place_of(SENDBACK, False, False, queued=True) == WAITING_PLACE  # no live order
    assert place_of(ENDED, False, False) == place_of(WAIT, False, False) == REVIEW_PLACE
    assert place_of(ACCEPT, False, False) == PUBLISH_PLACE
    assert place_of(ACCEPT, True, True) == MERGED_PLACE
    assert place_of(ACCEPT, True, False) == PUBLISH_PLACE  # closed without its merge
    assert place_of(ESCALATE, False, False) == ESCALATED_PLACE


def test_the_longest_stillness_in_each_place_counts_one_still_going():
    dwell = Dwell()
    dwell.see(0.0, {1: WAITING_PLACE, 2: RUNNING_PLACE})
    dwell.see(5.0, {1: RUNNING_PLACE, 2: REVIEW_PLACE})
    dwell.see(8.0, {1: RUNNING_PLACE, 2: PUBLISH_PLACE})
    dwell.see(20.0, {1: REVIEW_PLACE, 2: PUBLISH_PLACE})
    dwell.see(21.0, {1: REVIEW_PLACE, 2: PUBLISH_PLACE})
    assert dwell.longest[RUNNING_PLACE] == (15.0, 1)  # from 5 s to the sample at 20 s
    assert dwell.longest[REVIEW_PLACE] == (3.0, 2)
    assert dwell.longest[PUBLISH_PLACE] == (13.0, 2)  # still going at the last sample
    check = sat_within_bounds(dwell, BOUNDS)
    assert check.violations == ("#2: 13 s publishing, past its bound of 10 s",)
    assert check.measured == (
        "longest still: queued for a runner 0 s, running 15 s, in review 3 s,"
        " publishing 13 s (5 samples)"
    )


def test_a_place_that_drains_moves_its_queue_and_one_left_behind_is_still():
    dwell = Dwell()
    queue = {n: PUBLISH_PLACE for n in range(1, 6)}
    for t in range(5):  # one leaves every 8 s: each waits 32 s, never 8 s still
        dwell.see(8.0 * t, queue)
        queue[t + 1] = MERGED_PLACE
    assert dwell.longest[PUBLISH_PLACE][0] == 8.0
    stuck = Dwell()
    stuck.see(0.0, {1: PUBLISH_PLACE, 2: PUBLISH_PLACE})
    stuck.see(5.0, {1: PUBLISH_PLACE, 2: MERGED_PLACE})
    stuck.see(50.0, {1: PUBLISH_PLACE, 2: MERGED_PLACE})
    assert stuck.longest[PUBLISH_PLACE] == (45.0, 1)


def test_escalated_and_waiting_issues_are_not_bounded():
    dwell = Dwell()
    dwell.see(0.0, {1: ESCALATED_PLACE, 2: WAITING_PLACE})
    dwell.see(500.0, {1: ESCALATED_PLACE, 2: WAITING_PLACE})
    check = sat_within_bounds(dwell, BOUNDS)
    assert check.ok
    assert check.measured.startswith("longest still: queued for a runner 0 s, running 0 s,")


def test_a_queue_the_runners_claim_from_moves_while_the_turns_run_long():
    """Issue 27's #49: orders queued for a runner's slot are claimed one every 8 s while
    no turn ends in 40 s; counted as "running", each seemed still for 32 s."""
    dwell = Dwell()
    places = {n: place_of(RUNNING, False, False, queued=True) for n in range(1, 6)}
    for t in range(6):
        dwell.see(8.0 * t, places)
        if t < 5:
            places[t + 1] = place_of(RUNNING, False, False)  # claimed: its turn runs
    assert dwell.longest[QUEUED_PLACE] == (8.0, 1)
    assert dwell.longest[RUNNING_PLACE] == (32.0, 1)  # the first turn, not the queue


def test_an_order_no_runner_claims_is_still_while_the_turns_beside_it_end():
    """A queued order left there while turns end and new ones are claimed is stuck."""
    dwell = Dwell()
    for t in range(11):  # a turn ends every 5 s; #1 is never claimed
        places = {1: place_of(RUNNING, False, False, queued=True), 2 + t: RUNNING_PLACE}
        if t:
            places[1 + t] = MERGED_PLACE  # the turn before ended (and its work went on)
        dwell.see(5.0 * t, places)
    assert dwell.longest[QUEUED_PLACE] == (50.0, 1)
    check = sat_within_bounds(dwell, BOUNDS)
    assert check.violations == ("#1: 50 s queued for a runner, past its bound of 30 s",)
