"""Every outcome label maps to its own short snake_case code; anything else to OTHER."""

from __future__ import annotations

import re

import pytest

from hive.rules.outcome_codes import OutcomeCode, outcome_code
from hive.rules.states import Outcome, is_outcome, reaped_no_completion

SNAKE = re.compile(r"[a-z][a-z0-9]*(_[a-z0-9]+)*")


def test_every_outcome_maps_to_a_code_of_its_own() -> None:
    codes = [outcome_code(o) for o in Outcome]
    assert OutcomeCode.OTHER not in codes
    assert len(set(codes)) == len(Outcome)  # no two outcomes share a code


def test_the_no_completion_outcome_maps_to_one_code_whatever_its_bound() -> None:
    for minutes in (1, 120, 999):
        label = reaped_no_completion(minutes)
        assert is_outcome(label)
        assert outcome_code(label) is OutcomeCode.REAPED_NO_COMPLETION


def test_every_code_but_other_is_some_outcome_s() -> None:
    reached = {outcome_code(o) for o in Outcome} | {outcome_code(reaped_no_completion(120))}
    assert reached == set(OutcomeCode) - {OutcomeCode.OTHER}


def test_codes_are_short_snake_case() -> None:
    for code in OutcomeCode:
        assert SNAKE.fullmatch(code.value), code
        assert len(code.value) <= 32


@pytest.mark.parametrize(
    "label",
    [
        "",
        "Finished",
        "finished ",
        "stopped",
        "reaped: no completion within 0 minutes",
        "reaped: no completion within 12 minutes; and more",
        "ended badly: exit 3",
    ],
)
def test_a_label_outside_the_closed_set_is_other(label: str) -> None:
    assert outcome_code(label) is OutcomeCode.OTHER
