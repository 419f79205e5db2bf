"""0017: one trigger NOTIFYs `hive_issues` for every writer: a new issue, one opened
again, a change to what a round reads of it; a close, an edit that changes nothing and a
follow of its GitHub issue wake nobody. Each quiet write is followed by a loud one, and
the next wake must carry only the loud one's number (no sleeping for silence)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from hive.store import issues, people
from hive.store.issues import ISSUES_CHANNEL, NewIssue
from hive.store.listen import Listener
from hive.store.people import IssueChange

pytestmark = pytest.mark.live

WAIT_SECONDS = 10.0


def test_every_writer_of_an_issue_wakes_the_queen_through_the_one_trigger(
    db: Any, hive_db_url: str
) -> None:
    with Listener(hive_db_url, channels=(ISSUES_CHANNEL,)) as queen:

        def heard() -> tuple[str, ...]:
            return queen.wait(WAIT_SECONDS).payloads

        one = issues.create(db, NewIssue(title="one")).number
        assert heard() == (str(one),)
        issues.upsert(db, 90, NewIssue(title="ninety"))
        assert heard() == ("90",)
        assert people.edit_issue(db, one, IssueChange(title="one, again"))
        assert heard() == (str(one),)
        assert people.close_issue(db, one, "closed by hand")  # quiet
        assert people.edit_issue(db, 90, IssueChange(title="ninety"))  # unchanged: quiet
        assert issues.follow_forge(db, 90, datetime.now(UTC))  # quiet
        assert people.reopen_issue(db, one)
        assert heard() == (str(one),)
        assert issues.set_state(db, one, "closed")  # quiet
        assert issues.set_state(db, one, "open")
        assert heard() == (str(one),)
