"""The Queen after a review, against the real store: a sent-back issue goes again with the
review's notes in its brief and continues its branch, accepted work is neither dispatched
again nor news, escalated work is named once a round as needing a person, and floors
release what rests too long. Verdicts are written as the reviewer writes them
(`reviews.write_verdict`); the clock moves by backdating the row."""

from __future__ import annotations

import subprocess

from hive.rules.criteria import SENDBACK_HEADING
from hive.rules.lifecycle import ReviewState
from hive.rules.states import (
    VERDICT_ACCEPT,
    VERDICT_EMPTY,
    VERDICT_ESCALATE,
    VERDICT_SENDBACK,
    VERDICT_WAIT,
    WAIT,
)
from hive.store import floors, orders, reports, reviews
from hive.store.reviews import Verdict
from hive.testing import wait_for_ending
from tests.live.runtime.conftest import AGENT, add_issue
from tests.live.runtime.test_queen import KEY_2, end_as, queen_of

NOTE = "- file `src/app.py` contains `fixed`: it still says the old text"
VERDICTS = {
    "sendback": Verdict(VERDICT_SENDBACK, ReviewState.SENDBACK, NOTE),
    "accept": Verdict(VERDICT_ACCEPT, ReviewState.ACCEPT, "all 1 criteria met"),
    "escalate": Verdict(
        VERDICT_ESCALATE,
        ReviewState.ESCALATE,
        "sent back 2 times and still unmet:\n" + NOTE,
    ),
    "empty": Verdict(VERDICT_EMPTY, ReviewState.EMPTY, "no commit beyond base: nothing to review"),
    "wait": Verdict(VERDICT_WAIT, ReviewState.WAIT, "judged 0 of 1 criteria", 30),
}


def judge(rt, issue: int, verdict: str) -> None:
    order = orders.get(rt.db, issue)
    assert order is not None
    assert reviews.write_verdict(rt.db, issue, order.conversation_id, VERDICTS[verdict]).landed


def finished(rt, queen, issue: int) -> None:
    """`issue` dispatched (elsewhere mode) and ended `finished` as a runner would."""
    assert issue in queen.run_once().dispatched
    end_as(rt, issue, "finished")


def backdate(rt, issue: int, column: str, minutes: float) -> None:
    assert column in ("finished_at", "reviewed_at")
    with rt.db.connection() as conn:
        conn.execute(
            f"UPDATE hive.queen_dispatch SET {column} = {column} - make_interval(secs => %s)"
            " WHERE issue = %s",
            (minutes * 60.0, issue),
        )


def git(repo: str, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", repo, *args], check=True, capture_output=True, text=True
    ).stdout.strip()


def test_a_sent_back_issue_goes_again_with_the_notes_and_continues_its_branch(make_runtime):
    rt = make_runtime(AGENT=AGENT + "append")
    add_issue(rt.db, 4)
    queen = queen_of(rt)
    assert queen.run_once().dispatched == (4,)
    first = wait_for_ending(rt.db, 4)
    assert first.outcome == "finished" and first.salvaged_sha
    assert SENDBACK_HEADING not in (first.brief or "")
    judge(rt, 4, "sendback")
    add_issue(rt.db, 2)  # the same file: the send-back holds it from every other issue
    result = queen.run_once()
    assert result.dispatched == (4,)
    assert result.skipped == (
        (2, "skipped: its boundary overlaps files another order holds: src/app.py"),
    )
    again = orders.get(rt.db, 4)
    assert again is not None and again.attempt == 2
    assert f"{SENDBACK_HEADING}\n{NOTE}\n" in (again.brief or "")
    second = wait_for_ending(rt.db, 4)
    assert second.outcome == "finished" and second.salvaged_sha
    # attempt 2's commit is a child of attempt 1's: the branch went on
    repo = rt.checkout.repo.path
    assert git(repo, "rev-parse", f"{second.salvaged_sha}^") == first.salvaged_sha
    lines = (rt.settings.workdir / "queen-4" / "src/app.py").read_text().splitlines()
    assert sum(line.startswith("a turn in ") for line in lines) == 2


def test_accepted_work_is_not_dispatched_again_nor_news_each_round(make_runtime):
    rt = make_runtime(QUEEN_BEES_RUN_ELSEWHERE="on")
    add_issue(rt.db, 5)
    queen = queen_of(rt)
    finished(rt, queen, 5)
    judge(rt, 5, "accept")
    for _ in range(2):
        result = queen.run_once()
        assert result.dispatched == () and result.skipped == ()
        report = reports.latest(rt.db, 1)[0]
        assert "#5" not in report.body and not report.needs_you
    order = orders.get(rt.db, 5)
    assert order is not None and order.attempt == 1 and order.review_state == "accept"


def test_escalated_work_is_named_once_a_round_as_needing_a_person(make_runtime):
    rt = make_runtime(QUEEN_BEES_RUN_ELSEWHERE="on")
    add_issue(rt.db, 6)
    queen = queen_of(rt)
    finished(rt, queen, 6)
    judge(rt, 6, "escalate")
    said = (
        "#6: needs a person: sent back 2 times and still unmet;"
        " hive approve 6 / hive reject 6 --note ..."
    )
    for _ in range(2):
        assert queen.run_once().dispatched == ()
        report = reports.latest(rt.db, 1)[0]
        assert report.body.splitlines().count(said) == 1 and report.needs_you
        assert report.body.count("#6") == 1
    assert orders.get(rt.db, 6).attempt == 1  # type: ignore[union-attr]


def test_floors_release_empty_sent_back_and_waiting_work_which_goes_again(make_runtime):
    lanes = {"MAX_WORKERS": "8", "WORKER_LANES_PER_KEY": "4", **KEY_2}
    rt = make_runtime(QUEEN_BEES_RUN_ELSEWHERE="on", **lanes)
    cases = {
        1: ("empty", "reviewed_at", 31),
        2: ("sendback", "reviewed_at", 61),
        3: ("wait", "finished_at", 6 * 60 + 1),  # its last visit was just now
        4: ("empty", "reviewed_at", 29),  # not yet
        5: ("sendback", "reviewed_at", 59),  # not yet, but sent back: it goes anyway
        6: ("wait", "reviewed_at", 6 * 60 + 1),  # its clock is its finish: not yet
    }
    queen = queen_of(rt)
    for issue in cases:
        add_issue(rt.db, issue, boundary=(f"docs/n{issue}.md",), body=f"add docs/n{issue}.md")
    assert queen.run_once().dispatched == tuple(cases)
    for issue, (verdict, column, minutes) in cases.items():
        end_as(rt, issue, "finished")
        judge(rt, issue, verdict)
        backdate(rt, issue, column, minutes)
    result = queen.run_once()
    assert result.dispatched == (1, 2, 3, 5)
    released = {issue: orders.history(rt.db, issue)[-1].snapshot for issue in (1, 2, 3)}
    assert {n: s["review_state"] for n, s in released.items()} == dict.fromkeys(
        (1, 2, 3), "released"
    )
    # a send-back's note is kept for the next brief; the others' are cleared
    assert [released[n]["review_note"] for n in (1, 2, 3)] == [None, NOTE, None]
    assert SENDBACK_HEADING in (orders.get(rt.db, 2).brief or "")  # type: ignore[union-attr]
    assert orders.history(rt.db, 5)[-1].snapshot["review_state"] == "sendback"
    assert [orders.get(rt.db, n).review_state for n in (4, 6)] == ["empty", "wait"]  # type: ignore[union-attr]


def test_a_floor_release_judged_in_a_state_the_row_has_left_writes_nothing(make_runtime):
    rt = make_runtime(QUEEN_BEES_RUN_ELSEWHERE="on")
    add_issue(rt.db, 7)
    finished(rt, queen_of(rt), 7)
    judge(rt, 7, "wait")
    seen = orders.get(rt.db, 7)
    assert seen is not None
    judge(rt, 7, "sendback")  # a verdict written after the floor was judged
    moved = floors.release(rt.db, 7, seen.conversation_id, state=WAIT)
    assert not moved.landed and not moved.illegal
    assert orders.get(rt.db, 7).review_state == "sendback"  # type: ignore[union-attr]
