"""How long each issue sat in one place (`hive chaos --loop`): places from the order's
state, the longest stays, and the bound each place has."""

from __future__ import annotations

from hive.chaos.dwell import (
    ESCALATED_PLACE,
    MERGED_PLACE,
    PUBLISH_PLACE,
    REVIEW_PLACE,
    RUNNING_PLACE,
    WAITING_PLACE,
    Dwell,
    place_of,
    sat_within_bounds,
)
from hive.rules.states import ACCEPT, ENDED, ESCALATE, RUNNING, SENDBACK, WAIT

BOUNDS = {RUNNING_PLACE: 30.0, REVIEW_PLACE: 20.0, PUBLISH_PLACE: 10.0}


def test_each_state_has_its_place():
    assert place_of(None, False, False) == WAITING_PLACE
    assert place_of(SENDBACK, False, False) == WAITING_PLACE
    assert place_of(RUNNING, False, False) == RUNNING_PLACE
    assert place_of(ENDED, False, False) == place_of(WAIT, False, False) == REVIEW_PLACE
    assert place_of(ACCEPT, False, False) == PUBLISH_PLACE
    assert place_of(ACCEPT, True, True) == MERGED_PLACE
    assert place_of(ACCEPT, True, False) == PUBLISH_PLACE  # closed without its merge
    assert place_of(ESCALATE, False, False) == ESCALATED_PLACE


def test_the_longest_stay_in_each_place_counts_one_still_going_to_the_end():
    dwell = Dwell()
    dwell.see(0.0, {1: WAITING_PLACE, 2: RUNNING_PLACE})
    dwell.see(5.0, {1: RUNNING_PLACE, 2: REVIEW_PLACE})
    dwell.see(8.0, {1: RUNNING_PLACE, 2: PUBLISH_PLACE})
    dwell.see(20.0, {1: REVIEW_PLACE, 2: MERGED_PLACE})
    dwell.see(21.0, {1: REVIEW_PLACE, 2: MERGED_PLACE})
    dwell.finish()
    assert dwell.longest[RUNNING_PLACE] == (15.0, 1)
    assert dwell.longest[REVIEW_PLACE] == (3.0, 2)
    assert dwell.longest[PUBLISH_PLACE] == (12.0, 2)
    assert dwell.longest[MERGED_PLACE] == (1.0, 2)
    check = sat_within_bounds(dwell, BOUNDS)
    assert check.violations == ("#2: 12 s publishing, past its bound of 10 s",)
    assert check.measured == "longest: running 15 s, in review 3 s, publishing 12 s (5 samples)"


def test_escalated_and_waiting_issues_are_not_bounded():
    dwell = Dwell()
    dwell.see(0.0, {1: ESCALATED_PLACE, 2: WAITING_PLACE})
    dwell.see(500.0, {1: ESCALATED_PLACE, 2: WAITING_PLACE})
    dwell.finish()
    check = sat_within_bounds(dwell, BOUNDS)
    assert check.ok and check.measured.startswith("longest: running 0 s,")
