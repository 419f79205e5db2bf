"""The review jam against the fake GitHub: a pull request that will not move is in one
of ten cases (`hive.rules.forge_stuck.Stuck`), and the Queen makes the move its sentence says.
Required review, branch protection, a conflict and a moved head are in
test_github_publish.py; the other six are here."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from hive.rules.forge_stuck import NEXT_MOVE, Stuck
from hive.rules.jobs import Step
from hive.store import jobs, waits
from tests.live.forge.test_github_publish import _one, _publisher, _ready, _run

pytestmark = pytest.mark.live


@pytest.fixture
def said(caplog: pytest.LogCaptureFixture) -> Any:
    caplog.set_level(logging.INFO, logger="hive.publish")
    return lambda: [r.getMessage() for r in caplog.records if r.name == "hive.publish"]


def _green(github: Any, finished_work: Any, url: str, db: Any) -> tuple[int, Any, Any]:
    number, work, job = _ready(github, finished_work, url, db, {"docs/a.md": "hello\n"})
    github.set_check(work.head_sha, "unit", "success", hook=False)
    return number, work, job


@pytest.mark.parametrize(
    ("block", "case", "wake_within"),
    [("computing", Stuck.COMPUTING, 2), ("draft", Stuck.DRAFT, 60)],
)
def test_a_pull_request_still_computed_or_a_draft_parks_then_merges(
    db, github, forge, finished_work, queen_checkout, hive_repo, hive_db_url,
    block, case, wake_within,
):  # fmt: skip
    number, _work, job = _green(github, finished_work, hive_db_url, db)
    github.block_merge = block
    publisher = _publisher(db, queen_checkout, hive_repo, forge)
    assert _run(db, publisher).parked == 1
    parked = jobs.get(db, job.id)
    assert parked is not None and parked.step == Step.MERGE
    assert parked.detail is not None and NEXT_MOVE[case] in parked.detail
    assert f"({case.value})" in parked.detail
    wake = _one(
        hive_db_url,
        "SELECT extract(epoch FROM wake_at - now()) FROM hive.queen_wait WHERE key = %s",
        f"github:{number}",
    )
    assert wake is not None and 0 < float(wake) <= wake_within
    assert not github.merge_methods  # nothing merged while it is in the case
    github.block_merge = None
    assert waits.resolve(db, f"github:{number}")
    assert _run(db, publisher).finished == 1
    assert github.state.issues[number]["state"] == "closed"


def test_a_draft_refused_at_the_merge_parks_and_is_not_sent_back(
    db, github, forge, finished_work, queen_checkout, hive_repo, hive_db_url
):
    _number, _work, job = _green(github, finished_work, hive_db_url, db)
    real_merge = forge.steps.merge

    def made_a_draft_after_the_look(ctx: Any, facts: Any, red: Any) -> Any:
        answer = real_merge(ctx, facts, red)
        github.block_merge = "draft"
        return answer

    forge.steps.merge = made_a_draft_after_the_look  # type: ignore[method-assign]
    assert _run(db, _publisher(db, queen_checkout, hive_repo, forge)).parked == 1
    parked = jobs.get(db, job.id)
    assert parked is not None and parked.step == Step.PUSH
    assert parked.detail is not None and NEXT_MOVE[Stuck.DRAFT] in parked.detail
    assert _one(hive_db_url, "SELECT review_state FROM hive.queen_dispatch") == "accept"


def test_a_branch_behind_its_base_sends_the_work_back(
    db, github, forge, finished_work, queen_checkout, hive_repo, hive_db_url
):
    _number, _work, job = _green(github, finished_work, hive_db_url, db)
    github.block_merge = "behind"
    before = github.base_sha()
    assert _run(db, _publisher(db, queen_checkout, hive_repo, forge)).finished == 1
    assert jobs.get(db, job.id).step == Step.SENT_BACK  # type: ignore[union-attr]
    state = _one(hive_db_url, "SELECT review_state FROM hive.queen_dispatch")
    note = _one(hive_db_url, "SELECT review_note FROM hive.queen_dispatch")
    assert state == "sendback"
    assert "is behind main" in note and NEXT_MOVE[Stuck.BEHIND] in note
    assert github.base_sha() == before and not github.merge_methods


@pytest.mark.parametrize("how", ["closed", "head deleted"])
def test_a_pull_request_closed_or_headless_is_opened_anew_with_the_accepted_head(
    db, github, forge, finished_work, queen_checkout, hive_repo, hive_db_url, said, how
):
    number, work, job = _green(github, finished_work, hive_db_url, db)
    branch = f"queen-{number}"
    real_merge = forge.steps.merge
    done: list[int] = []

    def a_person_acts_first(ctx: Any, facts: Any, red: Any) -> Any:
        if not done:
            (first,) = github.state.pulls
            if how == "closed":
                github.person_closes(first)
            else:
                github.delete_branch(branch)
            done.append(first)
        return real_merge(ctx, facts, red)

    forge.steps.merge = a_person_acts_first  # type: ignore[method-assign]
    assert _run(db, _publisher(db, queen_checkout, hive_repo, forge)).finished == 1
    assert jobs.get(db, job.id).step == Step.DONE  # type: ignore[union-attr]
    case = Stuck.CLOSED if how == "closed" else Stuck.HEAD_GONE
    assert any(f"({case.value}): {NEXT_MOVE[case]}" in line for line in said())
    first = github.state.pulls[done[0]]
    assert first["state"] == "closed" and not first["merged"]
    (merged,) = [p for p in github.state.pulls.values() if p["merged"]]
    assert merged["number"] != done[0]  # a new pull request, as the sentence says
    assert github.branch_sha(branch) == work.head_sha
    assert len(github.merge_methods) == 1
    assert github.state.issues[number]["state"] == "closed"


def test_a_pull_request_a_person_merged_is_taken_as_the_merge(
    db, github, forge, finished_work, queen_checkout, hive_repo, hive_db_url, said
):
    number, _work, job = _green(github, finished_work, hive_db_url, db)
    real_merge = forge.steps.merge
    by_person: list[str] = []

    def a_person_merges_first(ctx: Any, facts: Any, red: Any) -> Any:
        if not by_person:
            (first,) = github.state.pulls
            by_person.append(github.person_merges(first))
        return real_merge(ctx, facts, red)

    forge.steps.merge = a_person_merges_first  # type: ignore[method-assign]
    assert _run(db, _publisher(db, queen_checkout, hive_repo, forge)).finished == 1
    assert jobs.get(db, job.id).step == Step.DONE  # type: ignore[union-attr]
    assert any(NEXT_MOVE[Stuck.MERGED] in line for line in said())
    assert github.base_sha() == by_person[0]
    assert len(github.merge_methods) == 1  # the person's merge only
    assert _one(hive_db_url, "SELECT merged_sha FROM hive.queen_dispatch") == by_person[0]
    assert github.state.issues[number]["state"] == "closed"
    assert len(github.state.pulls) == 1
