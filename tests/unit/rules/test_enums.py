"""Every rule family is an IntEnum (or, for outcomes, a StrEnum) with its card's values,
and its old constant names are its members."""

from enum import IntEnum, StrEnum

from hive.rules import drain, holds, keys, priority, signals, states, turn_stop, waits


def values(family: type[IntEnum]) -> dict[str, int]:
    return {member.name: member.value for member in family}


def test_each_family_keeps_the_cards_numbers() -> None:
    assert values(drain.WorkKind) == {"BEE": 0, "REVIEW": 1, "ROUND": 2, "JOB": 3, "WAIT": 4}
    assert values(drain.Verdict) == {"DONE": 0, "LEAVE": 1, "STOP": 2, "HOLD": 3, "HAND_BACK": 4}
    assert values(drain.ExitStep) == {"NOW": 0, "WAIT": 1}
    assert values(signals.Exit) == {
        "NORMAL": 0,
        "SHUTDOWN": 1,
        "KILL": 2,
        "KILLED": 3,
        "CRASH": 4,
        "NONE": 99,
    }
    assert values(turn_stop.Escalation) == {"NOTHING": 0, "KILL_GROUP": 1, "ABANDON": 2}
    assert values(turn_stop.Step) == {"RUN": 0, "SKIP": 1, "CUT": 2}
    assert values(holds.Phase) == {
        "RUNNING": 0,
        "AWAITING_REVIEW": 1,
        "SENT_BACK": 2,
        "ESCALATED": 3,
        "DONE": 4,
    }
    assert values(priority.Level) == {"CRITICAL": 0, "HIGH": 1, "NORMAL": 2, "LOW": 3}
    assert values(keys.RefusalKind) == {"QUOTA": 0, "TRANSIENT": 1, "OTHER": 2}
    assert values(waits.WaitState) == {"WAITING": 0, "RESOLVED": 1, "EXPIRED": 2, "CANCELLED": 3}
    assert [s.value for s in states.State] == [*range(12), 99]
    assert [e.value for e in states.Event] == list(range(16))


def test_the_old_names_are_the_members() -> None:
    assert drain.WK_ROUND is drain.WorkKind.ROUND and drain.DV_HAND_BACK is drain.Verdict.HAND_BACK
    assert drain.EXIT_WAIT is drain.ExitStep.WAIT
    assert signals.X_KILL is signals.Exit.KILL and signals.X_NONE is signals.Exit.NONE
    assert turn_stop.ESC_ABANDON is turn_stop.Escalation.ABANDON
    assert turn_stop.STEP_SKIP is turn_stop.Step.SKIP
    assert holds.PH_SENT_BACK is holds.Phase.SENT_BACK
    assert priority.LOW is priority.Level.LOW
    assert keys.REFUSAL_TRANSIENT is keys.RefusalKind.TRANSIENT
    assert waits.EXPIRED is waits.WaitState.EXPIRED
    assert states.REAPED is states.State.REAPED and states.REDISPATCH is states.Event.REDISPATCH


def test_the_rules_answer_members_not_bare_ints() -> None:
    assert drain.drain_verdict(drain.WK_BEE, False, 0, 1) is drain.Verdict.HOLD
    assert drain.exit_step(0, 0, 0) is drain.ExitStep.NOW
    assert signals.stop_signal(0, 3000) is signals.Exit.SHUTDOWN
    assert turn_stop.escalation(True, False) is turn_stop.Escalation.KILL_GROUP
    assert turn_stop.step_on_abort(False, True, False) is turn_stop.Step.SKIP
    assert priority.label_level(["P1"]) is priority.Level.HIGH
    assert priority.aged_level(priority.LOW, priority.AGING_SECONDS) == (
        priority.Level.NORMAL,
        True,
    )
    assert keys.sort_refusal("429") is keys.RefusalKind.TRANSIENT
    assert waits.wait_move(waits.WAITING, 2) is waits.WaitState.EXPIRED
    assert states.next_state(states.NONE, states.START) is states.State.RUNNING
    assert states.ci_red_event(2) is states.Event.CI_RED_AT_CEILING


def test_outcomes_are_a_closed_str_enum_and_equal_their_labels() -> None:
    assert issubclass(states.Outcome, StrEnum)
    assert frozenset(states.Outcome) == states.OUTCOMES
    assert len(states.Outcome) == 9
    assert states.FINISHED == "finished" and str(states.HANDED_BACK) == "handed back"
    assert states.Outcome("reaped: runner silent") is states.REAPED_RUNNER_SILENT
    assert keys.refusal_outcome(keys.REFUSAL_QUOTA) is states.Outcome.QUOTA_EXHAUSTED
    # the stall reaper's label carries its bound: a function, not a member
    assert states.reaped_no_completion(120) not in set(states.Outcome)
