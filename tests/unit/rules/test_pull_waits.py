"""Issue 27: a parked pull request's bound, and which merge of it is the hive's."""

import pytest

from hive.rules.pull_waits import (
    ParkMove,
    foreign_merge_sentence,
    merge_is_ours,
    park_move,
    parked_too_long,
)

# (waited, bound, recheck): the move
VECTORS = [
    (0.0, 3600.0, 60, ParkMove(False, 60)),  # a first park looks again after the recheck
    (3000.0, 3600.0, 60, ParkMove(False, 60)),
    (3580.5, 3600.0, 60, ParkMove(False, 20)),  # the bound comes first: looked at then
    (3599.9, 3600.0, 60, ParkMove(False, 1)),  # never a wake of 0
    (0.0, 3600.0, 0, ParkMove(False, 1)),
]


@pytest.mark.parametrize(("waited", "bound", "recheck", "move"), VECTORS)
def test_a_park_looks_again_never_past_its_bound(waited, bound, recheck, move) -> None:
    assert park_move(waited, bound, recheck, 7, "why") == move


@pytest.mark.parametrize("waited", [3600.0, 3601.0, 86400.0])
def test_at_its_bound_a_park_escalates_with_a_sentence(waited) -> None:
    move = park_move(waited, 3600.0, 60, 7, "branch protection holds it")
    assert move.escalate and move.wake_in_seconds == 0
    assert move.sentence == parked_too_long(7, "branch protection holds it", waited, 3600.0)
    assert move.sentence.startswith("pull request #7 waited ")
    assert "past its bound of 60 min (HIVE_GITHUB_PARK_MINUTES)" in move.sentence
    assert ": branch protection holds it. A person sees to it on GitHub" in move.sentence


def test_the_sentence_says_short_waits_in_seconds() -> None:
    said = parked_too_long(3, "waits for checks on pull request #3: ci", 15.2, 15.0)
    assert said.startswith("pull request #3 waited 15 s, past its bound of 15 s ")


@pytest.mark.parametrize(
    ("merged", "accepted", "ours"),
    [("a" * 40, "a" * 40, True), ("b" * 40, "a" * 40, False), ("", "", False), ("", "a", False)],
)
def test_a_merge_is_the_hives_only_at_the_accepted_head(merged, accepted, ours) -> None:
    assert merge_is_ours(merged, accepted) is ours


def test_a_foreign_merge_is_said_with_both_heads() -> None:
    said = foreign_merge_sentence(9, "c" * 40, "b" * 40, "a" * 40)
    assert said.startswith(f"pull request #9 was merged by a person as {'c' * 12} at {'b' * 12},")
    assert f"accepted ({'a' * 12})" in said and "closes nothing" in said
    unknown = foreign_merge_sentence(9, "", "", "a" * 40)
    assert "as an unknown commit at an unknown head" in unknown
