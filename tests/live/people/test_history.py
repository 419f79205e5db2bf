"""`why`, `transcript` and the issue's whole view (`detail.issue`) on the real database."""

from __future__ import annotations

import uuid

import pytest

from hive.rules.jobs import JobKind, Step
from hive.rules.states import ACCEPT, ENDED, RUNNING
from hive.services import changes, detail, history, judgement
from hive.services import orders as order_service
from hive.services.errors import NotFound
from hive.store import jobs, orders, publish, reports, transcript

pytestmark = pytest.mark.live


def next_attempt(db, issue: int) -> orders.Order:
    """The issue's next attempt, queued for a runner."""
    new = orders.NewOrder(issue=issue, branch=f"queen-{issue}", base="main")
    assert orders.insert(db, new, queued=True) is orders.Insertion.WRITTEN
    made = orders.get(db, issue)
    assert made is not None
    return made


def texts(db, issue: int) -> list[str]:
    return [s.text for s in history.why(db, issue)]


# ---- why ----------------------------------------------------------------------------------


def test_why_tells_the_rounds_the_verdict_the_job_and_the_red_check_newest_first(db, make_order):
    make_order(3, ACCEPT)
    reports.add(db, "dispatched #3, #31", "#3: its first try")
    reports.add(db, "nothing to dispatch", "#31: skipped: an open blocker\n#3: skipped: held")
    reports.add(db, "nothing to dispatch", "#3: skipped: held")
    job = jobs.create(db, JobKind.PUBLISH, 3, Step.CHECKS, attempt=1, detail="checks: 1 failed")
    publish.record_check(
        db,
        issue=3,
        attempt=1,
        job=job.job.id,
        merge_sha="c" * 40,
        name="lint",
        result="fail",
        exit_code=1,
        seconds=0.5,
        output_tail="running\nE501 line too long\n",
    )
    judgement.reject(db, 3, "line 2 is too long\nand the title is wrong")
    said = history.why(db, 3)
    lines = [s.text for s in said]
    assert [s.at for s in said] == sorted((s.at for s in said), reverse=True)
    assert "attempt 1 sent back: line 2 is too long | and the title is wrong" in lines
    assert "check lint fail on cccccccccccc (exit 1), attempt 1: E501 line too long" in lines
    assert any(t.startswith(f"publish job {job.job.id} cancelled at checks") for t in lines)
    assert "round: dispatched #3, #31" in lines
    assert "round: #3: its first try" in lines
    assert any(t.startswith("round: #3: skipped: held (x2 since ") for t in lines)
    assert not any("#31: skipped" in t for t in lines)  # #31 is another issue
    assert "attempt 1 dispatched (queued for a runner)" in lines
    assert "attempt 1 ended finished" in lines


def test_why_names_earlier_attempts_a_merge_and_the_close(db, make_order):
    make_order(3, ENDED)
    judgement.reject(db, 3, "say hello")
    next_attempt(db, 3)
    changes.close(db, 3)
    lines = texts(db, 3)
    assert lines[0] == "closed: closed by hand"
    assert "attempt 1 sent back: say hello" in lines
    assert "attempt 2 ended cancelled: cancelled: its issue was closed by hand" in lines
    assert "attempt 2 dispatched (queued for a runner)" in lines


def test_why_cuts_a_long_sentence_and_keeps_to_its_limit(db, make_order):
    make_order(3, ENDED)
    judgement.reject(db, 3, "x" * 1000)
    for i in range(5):
        reports.add(db, f"round {i}", f"#3: reason {i}")
    said = history.why(db, 3, limit=3)
    assert len(said) == 3
    note = next(s.text for s in history.why(db, 3) if s.text.startswith("attempt 1 sent back"))
    assert len(note) == history.WHY_LINE_MAX_CHARS and note.endswith("...")


def test_why_of_an_unknown_issue_is_not_found(db):
    with pytest.raises(NotFound, match=r"^no issue #99$"):
        history.why(db, 99)


# ---- transcript ---------------------------------------------------------------------------


def test_the_transcript_runs_over_every_attempt_in_order(db, make_order):
    made = make_order(3, ENDED)
    transcript.append(db, made.conversation_id, 3, "stdout", "first try")
    judgement.reject(db, 3, "again")
    new = next_attempt(db, 3)
    transcript.append(db, new.conversation_id, 3, "stdout", "second try")
    transcript.append(db, new.conversation_id, 3, "stderr", "a warning")
    transcript.append(db, uuid.uuid4(), 4, "stdout", "another issue")
    got = [(e.attempt, e.line.kind, e.line.text) for e in history.transcript(db, 3)]
    assert got == [
        (1, "stdout", "first try"),
        (2, "stdout", "second try"),
        (2, "stderr", "a warning"),
    ]


def test_following_prints_new_lines_until_the_order_ends(db, make_order, monkeypatch):
    from hive.store import people

    made = make_order(3, RUNNING)
    transcript.append(db, made.conversation_id, 3, "stdout", "one")
    steps = iter(
        [
            lambda: transcript.append(db, made.conversation_id, 3, "stdout", "two"),
            lambda: None,  # a poll that finds nothing new
            lambda: order_service.cancel(db, 3),
        ]
    )
    polls: list[float] = []

    def between_polls(seconds: float) -> None:
        polls.append(seconds)
        next(steps)()

    real_facts = people.facts

    def facts_as_it_ends(conn, issue):
        # the turn's last line lands after the follow's last read, as the order ends
        now = real_facts(conn, issue)
        if now is not None and now.order_state != RUNNING and not polls[3:]:
            transcript.append(db, made.conversation_id, 3, "stdout", "three")
            polls.append(0.0)
        return now

    monkeypatch.setattr(people, "facts", facts_as_it_ends)
    got = [
        e.line.text
        for e in history.transcript(db, 3, follow=True, poll_seconds=0.25, sleep=between_polls)
    ]
    assert got == ["one", "two", "three"]  # the last line, written as it ended, too
    assert polls == [0.25, 0.25, 0.25, 0.0]


def test_following_an_order_not_in_flight_prints_what_there_is_and_ends(db, make_order):
    made = make_order(3, ENDED)
    transcript.append(db, made.conversation_id, 3, "stdout", "done")

    def never(seconds: float) -> None:
        raise AssertionError("nothing to follow: no poll")

    got = [e.line.text for e in history.transcript(db, 3, follow=True, sleep=never)]
    assert got == ["done"] and not history.in_flight(db, 3)


def test_a_long_transcript_comes_a_page_at_a_time_in_order(db, make_order, monkeypatch):
    from hive.store import people

    made = make_order(3, ENDED)
    for i in range(7):
        transcript.append(db, made.conversation_id, 3, "stdout", f"line {i}")
    monkeypatch.setattr(people, "TRANSCRIPT_PAGE_LINES", 3)
    pages: list[int] = []
    real = people.transcript_after

    def counted(*args, **kwargs):
        got = real(*args, limit=3)
        pages.append(len(got))
        return got

    monkeypatch.setattr(people, "transcript_after", counted)
    got = [e.line.text for e in history.transcript(db, 3)]
    assert got == [f"line {i}" for i in range(7)]
    assert pages == [3, 3, 1]


def test_the_transcript_of_an_unknown_issue_is_not_found(db):
    with pytest.raises(NotFound):
        list(history.transcript(db, 99))


# ---- the issue's whole view -----------------------------------------------------------------


def test_the_issue_view_has_its_order_checks_and_live_job(db, make_order):
    make_order(3, ACCEPT, sendbacks=1)
    job = jobs.create(db, JobKind.PUBLISH, 3, Step.GATE, attempt=1).job
    publish.record_check(
        db,
        issue=3,
        attempt=1,
        job=job.id,
        merge_sha="d" * 40,
        name="tests",
        result="pass",
        exit_code=0,
        seconds=1.0,
        output_tail="ok",
    )
    seen = detail.issue(db, 3)
    assert (seen["number"], seen["state"], seen["boundary"]) == (3, "open", ["a.txt"])
    order = seen["order"]
    assert (order["state"], order["attempt"], order["review_state"], order["sendbacks"]) == (
        "accept",
        1,
        "accept",
        1,
    )
    assert order["stands"] == "#3 is accepted and waits at the merge gate"
    assert order["merged_sha"] is None and isinstance(order["finished_at"], str)
    assert [(c["name"], c["result"]) for c in seen["checks"]] == [("tests", "pass")]
    shown = seen["job"]
    assert (shown["id"], shown["step"], shown["state"]) == (job.id, "gate", "ready")


def test_an_issue_without_an_order_shows_none(db, make_issue):
    make_issue(3)
    seen = detail.issue(db, 3)
    assert (seen["order"], seen["checks"], seen["job"]) == (None, [], None)


def test_the_view_of_an_unknown_issue_is_not_found(db):
    with pytest.raises(NotFound):
        detail.issue(db, 99)
