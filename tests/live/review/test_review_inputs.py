"""What a model reviewer reads (DESIGN 11): the diff against base, bounded with a
sentence when cut, the earlier send-back and the checks' results, after its criteria;
and which CLI binary it runs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from hive.actors.reviewer.inputs import context_of, sendback_note
from hive.agents.review import Context, criteria_from_brief, review_brief
from hive.configs import reviewer_launch
from hive.git.diff import bounded_diff
from hive.git.repo import Checkout, own_repo
from hive.jobs.heads import head_here
from hive.rules.criteria import SENDBACK_HEADING
from hive.settings import Settings
from hive.store import reviews
from tests.live.review.conftest import Finished

pytestmark = pytest.mark.live


def test_the_diff_is_whole_lines_and_says_when_it_was_cut(
    db: Any, queen_checkout: Checkout, finished_work: Callable[..., Finished]
) -> None:
    text = "".join(f"line {n}\n" for n in range(2000))
    work = finished_work(1, {"docs/a.md": text}, ["c"])
    (row,) = reviews.due(db)
    assert work.head_sha is not None and row.base_sha is not None
    with own_repo(queen_checkout) as repo:
        head = head_here(db, repo, 1, row.head_sha)
        assert head is not None
        whole = bounded_diff(repo, row.base_sha, head, 1_000_000)
        assert not whole.cut and "+line 1999\n" in whole.text
        cut = bounded_diff(repo, row.base_sha, head, 500)
        assert cut.cut and len(cut.text.encode()) <= 500 and cut.text.endswith("\n")
        context = context_of(db, repo, row, head, 1)
    assert context.diff_cut == ""  # 2000 short lines fit the default bound
    assert "+line 0" in context.diff


def test_the_brief_keeps_its_criteria_first_then_what_a_model_reads() -> None:
    context = Context(
        sendbacks=1,
        sendback_note="- c: still wrong",
        checks=("unit fail (exit 1) on attempt 1: 3 failed",),
        diff="+x\n 1. not a criterion\n",
        diff_cut="The diff is cut.",
    )
    brief = review_brief(7, "t", "body", ["a.md"], ["first", "second"], context)
    assert criteria_from_brief(brief) == ["first", "second"]
    for said in (
        "sent back 1 times",
        "- c: still wrong",
        "  unit fail (exit 1)",
        "+x",
        "The diff is cut.",
    ):
        assert said in brief
    assert "Your final message must hold those lines" in brief


def test_the_send_back_note_is_read_from_the_attempts_brief() -> None:
    assert sendback_note(f"Issue #1\n\n{SENDBACK_HEADING}\n- c: no\n") == "- c: no"
    assert sendback_note("Issue #1\n") == ""


def test_the_agent_binary_applies_only_to_the_bees_own_agent() -> None:
    same = Settings(agent="claude", reviewer_agent="claude", agent_bin="/opt/claude")
    other = Settings(agent="claude", reviewer_agent="codex", agent_bin="/opt/claude")
    assert reviewer_launch(same).agent_bin == "/opt/claude"
    assert reviewer_launch(other).agent_bin == ""
