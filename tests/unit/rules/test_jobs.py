"""RULES 10: the publish job's steps and where each answer leads."""

import pytest

from hive.rules.jobs import (
    END_STEPS,
    FIRST_STEP,
    LIVE_STATES,
    JobKind,
    JobState,
    Result,
    Step,
    ends_job,
    fetches_base,
    gate_answer,
    next_step,
)

# (step, answer, next step): the card's vectors
VECTORS = [
    (Step.CHECKS, Result.PASSED, Step.GATE),
    (Step.CHECKS, Result.NO_CHECKS, Step.GATE),
    (Step.CHECKS, Result.RED, Step.SENT_BACK),
    (Step.CHECKS, Result.ESCALATED, Step.SENT_BACK),
    (Step.MERGE, Result.ESCALATED, Step.SENT_BACK),
    (Step.PUSH, Result.ESCALATED, Step.SENT_BACK),
    (Step.GATE, Result.APPROVED, Step.MERGE),
    (Step.GATE, Result.PASSED, Step.MERGE),
    (Step.GATE, Result.MOVED, Step.CHECKS),
    (Step.MERGE, Result.MERGED, Step.PUSH),
    (Step.MERGE, Result.CONFLICT, Step.SENT_BACK),
    (Step.MERGE, Result.MOVED, Step.CHECKS),
    (Step.PUSH, Result.PUSHED, Step.CLOSE),
    (Step.PUSH, Result.MOVED, Step.MERGE),
    (Step.CLOSE, Result.CLOSED, Step.DONE),
]


def test_the_names_are_pinned() -> None:
    assert JobKind.PUBLISH == "publish"
    assert [s.value for s in JobState] == ["ready", "parked", "done", "failed", "cancelled"]
    assert {"ready", "parked"} == LIVE_STATES
    assert [s.value for s in Step] == [
        "checks", "gate", "merge", "push", "close", "done", "sent back", "dropped"
    ]  # fmt: skip
    assert FIRST_STEP == Step.CHECKS
    assert {Step.DONE, Step.SENT_BACK, Step.DROPPED} == END_STEPS


@pytest.mark.parametrize(("step", "answer", "to"), VECTORS)
def test_each_answer_leads_to_its_step(step: Step, answer: Result, to: Step) -> None:
    assert next_step(step, answer) == to
    # the row holds plain text: the same answer from the text
    assert next_step(step.value, answer.value) == to


def test_the_happy_path_runs_checks_gate_merge_push_close_done() -> None:
    answers = [Result.PASSED, Result.PASSED, Result.MERGED, Result.PUSHED, Result.CLOSED]
    step, path = FIRST_STEP, [FIRST_STEP]
    for answer in answers:
        got = next_step(step, answer)
        assert got is not None
        step = got
        path.append(step)
    assert path == [Step.CHECKS, Step.GATE, Step.MERGE, Step.PUSH, Step.CLOSE, Step.DONE]
    assert ends_job(step)


def test_zero_checks_never_skip_the_gate() -> None:
    assert next_step(Step.CHECKS, Result.NO_CHECKS) == Step.GATE
    assert next_step(Step.GATE, Result.NO_CHECKS) is None


def test_every_pair_the_table_does_not_list_leads_nowhere() -> None:
    listed = {(step, answer) for step, answer, _ in VECTORS}
    for step in Step:
        for answer in Result:
            if answer in (Result.PARKED, Result.GONE) or (step, answer) in listed:
                continue
            assert next_step(step, answer) is None, (step, answer)


def test_parking_keeps_a_live_step_and_an_ended_job_moves_no_more() -> None:
    for step in Step:
        if step in END_STEPS:
            assert next_step(step, Result.PARKED) is None
            assert ends_job(step)
        else:
            assert next_step(step, Result.PARKED) == step
            assert not ends_job(step)


def test_an_unknown_step_or_answer_leads_nowhere() -> None:
    assert next_step("lunch", Result.PASSED) is None
    assert next_step(Step.CHECKS, "maybe") is None


def test_an_attempt_no_longer_accepted_drops_the_job_from_any_live_step() -> None:
    for step in Step:
        want = None if step in END_STEPS else Step.DROPPED
        assert next_step(step, Result.GONE) == want, step


@pytest.mark.parametrize(
    ("step", "fetched", "fetches"),
    [
        (Step.CHECKS, False, True),  # a new claim: a round of checks on the base as it is
        (Step.CHECKS, True, False),  # MERGE fetched, found the base moved and came back
        (Step.GATE, False, False),
        (Step.GATE, True, False),
        (Step.MERGE, False, True),  # after a park or a restart
        (Step.MERGE, True, False),  # the run fetched at CHECKS: once per job
        (Step.PUSH, False, True),
        (Step.PUSH, True, False),
        (Step.CLOSE, False, False),
    ],
)
def test_a_publish_job_fetches_its_base_once_a_run(
    step: Step, fetched: bool, fetches: bool
) -> None:
    assert fetches_base(step, fetched) is fetches


# (merge known, checks ran, checks passed, approved, local, answer): the gate's vectors
GATE_VECTORS = [
    (True, 2, 2, False, True, Result.PASSED),  # every check on the merge passed
    (True, 1, 1, False, False, Result.PASSED),  # the forge's checks on its head
    (True, 2, 2, True, True, Result.PASSED),  # checks open it before an approval
    (True, 2, 1, False, True, Result.PARKED),  # a red check: a person decides
    (True, 2, 1, True, True, Result.APPROVED),  # ... and a person approved
    (False, 0, 0, True, True, Result.APPROVED),  # no checks configured, approved
    (False, 0, 0, False, True, Result.PARKED),  # no checks configured: zero never opens
    (True, 0, 0, False, True, Result.MOVED),  # a new claim's merge no check ran on
    (True, 0, 0, True, True, Result.APPROVED),  # ... an approval still opens the gate
    (True, 0, 0, False, False, Result.PARKED),  # the forge's head with no checks yet
    (False, 0, 0, False, False, Result.PARKED),  # the forge knows no head
]


@pytest.mark.parametrize(
    ("merge_known", "ran", "passed", "approved", "local", "answer"), GATE_VECTORS
)
def test_the_gate_opens_on_passed_checks_or_a_person_and_checks_a_moved_merge_again(
    merge_known: bool, ran: int, passed: int, approved: bool, local: bool, answer: Result
) -> None:
    got = gate_answer(
        merge_known=merge_known,
        checks_ran=ran,
        checks_passed=passed,
        approved=approved,
        local=local,
    )
    assert got == answer
    # every answer the gate gives leads somewhere from GATE
    assert next_step(Step.GATE, got) is not None
