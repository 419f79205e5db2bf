"""A card's facts from its row: its column, its runner, its age's start and its newest
event (pure: no store)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hive.rules.board import Column
from hive.rules.states import ACCEPT, RUNNING
from hive.services.board import card_of
from hive.store.board import CardRow

T0 = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def row(**fields) -> CardRow:
    base = dict.fromkeys(CardRow.__dataclass_fields__)
    base.update(number=7, title="t", issue_state="open", labels=[], created_at=T0, open_blockers=[])
    base.update(fields)
    return CardRow(**base)


def test_merged_work_names_its_merge_even_when_its_verdict_was_written_at_the_same_time():
    at = T0 + timedelta(minutes=5)
    card = card_of(
        row(attempt=1, order_state=ACCEPT, review_state="accept", reviewed_at=at,
            merged_sha="abcdef1234567890", merged_at=at)
    )  # fmt: skip
    assert card.column is Column.DONE
    assert card.last.text == "merged as abcdef123456"
    assert card.since == at


def test_a_queued_order_is_running_with_no_runner_and_a_claimed_one_names_its_runner():
    ordered = T0 + timedelta(minutes=1)
    queued = card_of(row(attempt=2, order_state=RUNNING, queued_at=ordered, ordered_at=ordered))
    assert (queued.column, queued.queued, queued.runner) == (Column.RUNNING, True, None)
    claimed = card_of(
        row(attempt=2, order_state=RUNNING, queued_at=ordered, ordered_at=ordered,
            claimed_by="runner-a", dispatched_at=ordered + timedelta(seconds=3), key_index=1)
    )  # fmt: skip
    assert (claimed.queued, claimed.runner, claimed.key_index) == (False, "runner-a", 1)
    assert claimed.last.text == "attempt 2 started on runner-a"
    assert claimed.since == ordered + timedelta(seconds=3)


def test_the_queen_runs_an_order_that_was_never_queued_and_its_newest_line_is_its_last_event():
    card = card_of(
        row(attempt=1, order_state=RUNNING, ordered_at=T0, dispatched_at=T0,
            said_at=T0 + timedelta(seconds=9), said="running the tests")
    )  # fmt: skip
    assert card.runner == "the Queen"
    assert card.last.text == "said: running the tests"


def test_backlog_sorts_by_number_and_done_newest_first():
    assert card_of(row(number=3)).sort_key < card_of(row(number=4)).sort_key
    older = card_of(row(issue_state="closed", merged_sha="a" * 40, merged_at=T0))
    newer = card_of(
        row(issue_state="closed", merged_sha="b" * 40, merged_at=T0 + timedelta(hours=1))
    )
    assert newer.sort_key < older.sort_key


def test_a_whole_sha_in_the_last_event_is_cut_to_twelve_hex_digits():
    sha = "0123456789abcdef0123456789abcdef01234567"
    at = T0 + timedelta(minutes=5)
    card = card_of(
        row(attempt=1, order_state=ACCEPT, review_state="accept", reviewed_at=at,
            merged_sha=sha, merged_at=at, issue_state="closed",
            closed_at=at + timedelta(seconds=1), closed_reason=f"merged as {sha}",
            said_at=at + timedelta(seconds=2), said=f"merged as {sha}")
    )  # fmt: skip
    assert card.last.text == "said: merged as 0123456789ab"
    assert card.merged_sha == sha
