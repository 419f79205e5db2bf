import pytest

from hive.rules import states as s
from hive.rules.lifecycle import ReviewState, may_replace, sources, state_of


@pytest.mark.parametrize(
    ("started", "finished", "outcome", "review", "state"),
    [
        (False, False, None, None, s.NONE),
        (False, True, "refused", None, s.REFUSED),
        (True, False, None, None, s.RUNNING),
        (True, True, "refused", None, s.REFUSED),
        (True, True, "reaped at boot", None, s.REAPED),
        (True, True, "reaped: runner silent", None, s.REAPED),
        (True, True, "reaped: no completion within 120 minutes", None, s.REAPED),
        (True, True, "cancelled", None, s.REAPED),
        (True, True, "handed back", None, s.RELEASED),
        (True, True, "ended badly", None, s.RELEASED),
        (True, True, "quota exhausted", None, s.RELEASED),
        (True, True, "finished", None, s.ENDED),
        (True, True, "finished", "wait", s.WAIT),
        (True, True, "finished", "accept", s.ACCEPT),
        (True, True, "finished", "sendback", s.SENDBACK),
        (True, True, "finished", "escalate", s.ESCALATE),
        (True, True, "finished", "empty", s.EMPTY),
        (True, True, "finished", "stale", s.STALE),
        (True, True, "finished", "released", s.RELEASED),
        (True, True, "finished", "bogus", s.ILLEGAL),
    ],
)
def test_the_state_is_read_from_the_row(
    started: bool, finished: bool, outcome: str | None, review: str | None, state: int
) -> None:
    assert state_of(started, finished, outcome, review) == state


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
    assert {state_of(True, True, "finished", r.value) for r in ReviewState} == {
        s.WAIT,
        s.ACCEPT,
        s.SENDBACK,
        s.ESCALATE,
        s.EMPTY,
        s.STALE,
        s.RELEASED,
    }
