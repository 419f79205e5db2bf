"""Every outcome a turn makes has a short snake_case code of its own; anything else is OTHER."""

from __future__ import annotations

import re

import pytest

from hive.rules.outcome_codes import REAPED_CODES, OutcomeCode, code_of
from hive.rules.states import Outcome

SNAKE = re.compile(r"[a-z][a-z0-9]*(_[a-z0-9]+)*")


def test_every_outcome_maps_to_a_code_of_its_own() -> None:
    codes = [code_of(o) for o in Outcome]
    assert OutcomeCode.OTHER not in codes
    assert len(set(codes)) == len(Outcome)  # no two outcomes share a code


def test_every_code_but_other_and_the_stall_reaper_s_is_some_outcome_s() -> None:
    reached = {code_of(o) for o in Outcome}
    assert reached == set(OutcomeCode) - {OutcomeCode.OTHER, OutcomeCode.REAPED_NO_COMPLETION}


def test_the_reaped_codes_are_the_reapers_and_a_person_s_cancel() -> None:
    assert {c.value for c in REAPED_CODES} == {
        "reaped_at_boot",
        "reaped_runner_silent",
        "reaped_no_completion",
        "cancelled",
    }


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
        "reaped: no completion within 120 minutes",  # the reaper names its code
        "ended badly: exit 3",
    ],
)
def test_a_label_outside_the_closed_set_is_other(label: str) -> None:
    assert code_of(label) is OutcomeCode.OTHER
