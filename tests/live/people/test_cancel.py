"""`hive order cancel`'s use case on the real database: an order in flight ends
`cancelled` (REAPED), its runner's heartbeat finds the row gone, and the Queen's next
round may dispatch the issue again."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from hive.actors.queen.facts import candidates_of, last_ends
from hive.git.facts import BaseFacts
from hive.rules.priority import skip_reason
from hive.rules.round import backing_off
from hive.rules.states import (
    ACCEPT,
    EMPTY,
    ENDED,
    ESCALATE,
    NONE,
    REAPED,
    REFUSED,
    RELEASED,
    RUNNING,
    SENDBACK,
    STALE,
    WAIT,
)
from hive.services import orders as order_service
from hive.services.errors import NotFound
from hive.services.standing import NotNow
from hive.store import issues, orders

from .conftest import review_of

pytestmark = pytest.mark.live

BASE = BaseFacts(sha="0" * 40, files=frozenset({"a.txt"}), dirs=frozenset(), symlinks={})


def test_cancel_ends_a_runners_order_and_its_heartbeat_finds_the_row_gone(db, make_order):
    made = make_order(3, RUNNING, runner="runner-1")
    fence = orders.Fence(3, made.conversation_id, "runner-1")
    assert orders.heartbeat(db, fence)
    done = order_service.cancel(db, 3)
    row = review_of(db, 3)
    assert (row["state"], row["outcome"]) == (REAPED, "cancelled")
    assert row["detail"] == "cancelled by hand"
    assert not orders.heartbeat(db, fence)  # fenced on finished_at IS NULL: the turn stops
    assert (done.issue, done.attempt, done.runner, done.queued) == (3, 1, "runner-1", False)
    said = str(done)
    assert "runner runner-1 stops the turn at its next heartbeat" in said
    assert "dispatched again in the Queen's next round" in said
    assert "hive issue close 3" in said and "hive issue block 3 --by M" in said


def test_a_cancelled_issue_is_a_candidate_again_at_once(db, make_order):
    make_order(3, RUNNING, failures_in_a_row=3)
    order_service.cancel(db, 3)
    now = datetime.now(UTC)
    every = orders.listing(db)
    found = candidates_of(issues.listing(db, open_only=True), every, BASE, now)
    (candidate,) = found.candidates
    assert candidate.state == REAPED
    assert skip_reason(candidate, held=()) is None  # the priority rule lets it go
    assert 3 not in backing_off(last_ends(every, now))  # a person's cancel is no failure


def test_cancel_of_a_queued_order_leaves_nothing_to_claim(db, make_order):
    make_order(3, RUNNING, runner=None, queued=True)
    done = order_service.cancel(db, 3)
    assert done.queued and "still queued" in str(done)
    assert orders.claim(db, "runner-2") is None


def test_cancel_of_the_queens_own_bee_says_its_turn_runs_on(db, make_order):
    make_order(3, RUNNING, runner=None, queued=False)
    done = order_service.cancel(db, 3)
    assert (done.runner, done.queued) == (None, False)
    assert "the Queen ran it herself" in str(done)


@pytest.mark.parametrize(
    "state",
    [NONE, REFUSED, ENDED, WAIT, ACCEPT, SENDBACK, ESCALATE, EMPTY, STALE, REAPED, RELEASED],
)
def test_cancel_refuses_an_order_not_in_flight(db, make_order, state):
    make_order(4, state)
    before = review_of(db, 4)
    with pytest.raises(NotNow) as refused:
        order_service.cancel(db, 4)
    assert str(refused.value).startswith("#4")
    assert "cannot cancel it; only an order in flight is cancelled" in str(refused.value)
    assert review_of(db, 4) == before


def test_cancel_of_an_issue_without_an_order_is_refused(db, make_issue):
    make_issue(5)
    with pytest.raises(NotNow, match=r"^#5 has no order yet: cannot cancel it"):
        order_service.cancel(db, 5)


def test_cancel_of_an_unknown_issue_is_not_found(db):
    with pytest.raises(NotFound, match=r"^no issue #99$"):
        order_service.cancel(db, 99)
