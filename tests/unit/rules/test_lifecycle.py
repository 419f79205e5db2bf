import pytest

from hive.rules import states as s
from hive.rules.lifecycle import ReviewState, may_replace, sources, state_of
from hive.rules.outcome_codes import OutcomeCode


@pytest.mark.parametrize(
    ("started", "finished", "code", "review", "state"),
    [
        (False, False, None, None, s.NONE),
        (False, True, OutcomeCode.REFUSED, None, s.REFUSED),
        (True, False, None, None, s.RUNNING),
        (True, True, OutcomeCode.REFUSED, None, s.REFUSED),
        (True, True, OutcomeCode.REAPED_AT_BOOT, None, s.REAPED),
        (True, True, OutcomeCode.REAPED_RUNNER_SILENT, None, s.REAPED),
        (True, True, OutcomeCode.REAPED_NO_COMPLETION, None, s.REAPED),
        (True, True, OutcomeCode.CANCELLED, None, s.REAPED),
        (True, True, OutcomeCode.HANDED_BACK, None, s.RELEASED),
        (True, True, OutcomeCode.ENDED_BADLY, None, s.RELEASED),
        (True, True, OutcomeCode.QUOTA_EXHAUSTED, None, s.RELEASED),
        (True, True, OutcomeCode.OTHER, None, s.RELEASED),
        (True, True, OutcomeCode.FINISHED, None, s.ENDED),
        (True, True, OutcomeCode.FINISHED, "wait", s.WAIT),
        (True, True, OutcomeCode.FINISHED, "accept", s.ACCEPT),
        (True, True, OutcomeCode.FINISHED, "sendback", s.SENDBACK),
        (True, True, OutcomeCode.FINISHED, "escalate", s.ESCALATE),
        (True, True, OutcomeCode.FINISHED, "empty", s.EMPTY),
        (True, True, OutcomeCode.FINISHED, "stale", s.STALE),
        (True, True, OutcomeCode.FINISHED, "released", s.RELEASED),
        (True, True, OutcomeCode.FINISHED, "bogus", s.ILLEGAL),
    ],
)
def test_the_state_is_read_from_the_row(
    started: bool, finished: bool, code: OutcomeCode | None, review: str | None, state: int
) -> None:
    assert state_of(started, finished, code, review) == state


def test_sources_are_the_states_the_table_lets_an_event_leave() -> None:
    assert sources(s.END) == (s.RUNNING,)
    assert sources(s.VERDICT_ACCEPT) == (s.ENDED, s.WAIT)
    assert sources(s.CRITERIA_CHANGED) == (s.ENDED, s.WAIT, s.SENDBACK, s.ESCALATE, s.EMPTY)
    assert sources(s.END_OTHER_TURN) == ()
    assert sources(s.REDISPATCH) == (s.REFUSED, s.STALE, s.REAPED, s.RELEASED)


def test_a_new_attempt_replaces_only_a_free_order_or_a_send_back() -> None:
    assert [st for st in range(s.STATES) if may_replace(st)] == [
        s.REFUSED,
        s.SENDBACK,
        s.STALE,
        s.REAPED,
        s.RELEASED,
    ]


def test_every_review_state_names_a_state() -> None:
    assert {state_of(True, True, OutcomeCode.FINISHED, r.value) for r in ReviewState} == {
        s.WAIT,
        s.ACCEPT,
        s.SENDBACK,
        s.ESCALATE,
        s.EMPTY,
        s.STALE,
        s.RELEASED,
    }
