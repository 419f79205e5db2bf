"""Issue 27's two defects of the GitHub publish job, against the fake GitHub: a required
check that never reports parked the pull request for ever (a look every recheck, no
escalation), and a pull request a person merged at another head was taken as the
work's merge. Now a park is bounded (HIVE_GITHUB_PARK_MINUTES) and escalates with a
sentence, and a merge at a head nobody accepted is escalated, not taken."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest

from hive.forge.github.api import Repository
from hive.forge.github.client import GitHubClient
from hive.forge.github.publish import GitHubPublishConfig, GitHubSteps
from hive.forge.github.watch import Watch
from hive.jobs.publish import PublishConfig, Publisher
from hive.metrics import HiveMetrics
from hive.rules.jobs import Step
from hive.store import jobs, waits
from tests.live.forge.conftest import TOKEN
from tests.live.forge.test_github_publish import _one, _publisher, _ready, _run

pytestmark = pytest.mark.live

PARK_SECONDS = 600.0


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def _bounded(db: Any, queen_checkout: Any, hive_repo: Any, forge: Any, clock: Clock) -> Publisher:
    config = GitHubPublishConfig(
        token=TOKEN, base="main", recheck_seconds=60, park_seconds=PARK_SECONDS
    )
    steps = GitHubSteps(db, queen_checkout, forge.repo, forge.watch, config, clock=clock)
    return Publisher(
        db, queen_checkout, HiveMetrics(), PublishConfig(str(hive_repo), "main"), forge=steps
    )


def _wake_in(url: str, number: int) -> float:
    found = _one(
        url,
        "SELECT extract(epoch FROM wake_at - now()) FROM hive.queen_wait"
        " WHERE key = %s AND state = 0",
        f"github:{number}",
    )
    assert found is not None
    return float(found)


def _dispatch(url: str) -> tuple[str, str]:
    state = _one(url, "SELECT review_state FROM hive.queen_dispatch")
    return state, _one(url, "SELECT review_note FROM hive.queen_dispatch") or ""


def test_a_required_check_that_never_reports_escalates_at_the_park_bound(
    db, github, forge, finished_work, queen_checkout, hive_repo, hive_db_url
):
    number, work, job = _ready(github, finished_work, hive_db_url, db, {"docs/a.md": "hello\n"})
    github.set_check(work.head_sha, "unit", "success", hook=False)
    github.block_heads[f"queen-{number}"] = "protected"  # "ci" is required and never reports
    clock = Clock()
    publisher = _bounded(db, queen_checkout, hive_repo, forge, clock)
    assert _run(db, publisher).parked == 1
    parked = jobs.get(db, job.id)
    assert parked is not None and parked.step == Step.PUSH
    assert "branch protection holds it" in (parked.detail or "")
    assert 0 < _wake_in(hive_db_url, number) <= 60  # the recheck
    clock.now += PARK_SECONDS - 20  # a look again near the bound: the next look is at it
    assert waits.resolve(db, f"github:{number}")
    assert _run(db, publisher).parked == 1
    assert 0 < _wake_in(hive_db_url, number) <= 20
    assert _dispatch(hive_db_url)[0] == "accept"
    clock.now += 20
    assert waits.resolve(db, f"github:{number}")
    assert _run(db, publisher).finished == 1
    ended = jobs.get(db, job.id)
    assert ended is not None and ended.step == Step.SENT_BACK
    state, note = _dispatch(hive_db_url)
    assert state == "escalate"
    assert note.startswith("pull request #") and "past its bound of 10 min" in note
    assert "branch protection holds it" in note and "A person sees to it on GitHub" in note
    assert not github.merge_methods and github.state.issues[number]["state"] == "open"


def test_checks_that_never_finish_escalate_at_the_park_bound(
    db, github, forge, finished_work, queen_checkout, hive_repo, hive_db_url
):
    number, work, job = _ready(github, finished_work, hive_db_url, db, {"docs/a.md": "hello\n"})
    github.set_check(work.head_sha, "ci", None, hook=False)  # in progress, for ever
    clock = Clock()
    publisher = _bounded(db, queen_checkout, hive_repo, forge, clock)
    for _ in range(3):
        assert _run(db, publisher).parked == 1
        assert jobs.get(db, job.id).step == Step.CHECKS  # type: ignore[union-attr]
        clock.now += PARK_SECONDS / 3
        waits.resolve(db, f"github:{number}")
    assert _run(db, publisher).finished == 1
    state, note = _dispatch(hive_db_url)
    assert state == "escalate" and "waits for checks on pull request #" in note
    assert note.endswith("the hive stops looking") and ": ci. A person" in note


def test_a_pull_request_that_conflicts_is_sent_back_naming_the_base_and_the_paths(
    db, github, forge, finished_work, queen_checkout, hive_repo, hive_db_url
):
    """A person's push to main conflicts with the work: the send-back names the base's
    commit and the paths, as the local forge's does, so the bee can merge that base in.
    Before, it said only "conflicts with main", and the chaos bee (reading the note as
    a model would) could not merge: three send-backs and the work was escalated
    (hive chaos --forge github --orders 60 --seed 27, #5)."""
    _number, work, job = _ready(github, finished_work, hive_db_url, db, {"docs/a.md": "hello\n"})
    github.set_check(work.head_sha, "unit", "success", hook=False)
    base = github.person_commits("main", "docs/a.md", "goodbye\n")
    assert _run(db, _publisher(db, queen_checkout, hive_repo, forge)).finished == 1
    assert jobs.get(db, job.id).step == Step.SENT_BACK  # type: ignore[union-attr]
    state, note = _dispatch(hive_db_url)
    assert state == "sendback" and "conflicts with main" in note
    assert f"does not merge into the base at {base[:12]}: conflicts in docs/a.md" in note
    assert not github.merge_methods


def test_a_foreign_merge_between_the_look_and_the_merge_is_not_taken(
    db, github, forge, finished_work, queen_checkout, hive_repo, hive_db_url
):
    """MERGE saw a pull request that may merge; before PUSH merged it, a person pushed a
    commit of their own onto it and merged it: the refused merge reads the pull request,
    finds it merged at another head, and escalates instead of taking it."""
    number, work, job = _ready(github, finished_work, hive_db_url, db, {"docs/a.md": "hello\n"})
    github.set_check(work.head_sha, "unit", "success", hook=False)
    real_merge = forge.steps.merge

    def a_person_merges_after_the_look(ctx: Any, facts: Any, red: Any) -> Any:
        answer = real_merge(ctx, facts, red)
        (first,) = github.state.pulls
        github.person_commits(f"queen-{number}", "docs/person.md", "not reviewed\n")
        github.person_merges(first)
        return answer

    forge.steps.merge = a_person_merges_after_the_look  # type: ignore[method-assign]
    publisher = Publisher(
        db, queen_checkout, HiveMetrics(), PublishConfig(str(hive_repo), "main"), forge=forge.steps
    )
    assert _run(db, publisher).finished == 1
    ended = jobs.get(db, job.id)
    assert ended is not None and ended.step == Step.SENT_BACK
    state, note = _dispatch(hive_db_url)
    assert state == "escalate" and "not at the head the reviewer accepted" in note
    assert _one(hive_db_url, "SELECT merged_sha FROM hive.queen_dispatch") is None
    assert github.state.issues[number]["state"] == "open"


def _impatient_publisher(db: Any, github: Any, queen_checkout: Any, hive_repo: Any) -> Publisher:
    """A publisher on the fake GitHub whose client gives a request up after 0.5 s."""
    client = GitHubClient(github.api_url, TOKEN, sleep=lambda s: None, timeout_seconds=0.5)
    repo = Repository(client, github.full_name)
    config = GitHubPublishConfig(token=TOKEN, base="main", recheck_seconds=60)
    steps = GitHubSteps(db, queen_checkout, repo, Watch(db, repo, "hive"), config)
    return Publisher(
        db, queen_checkout, HiveMetrics(), PublishConfig(str(hive_repo), "main"), forge=steps
    )


def test_a_merge_comment_whose_answer_was_lost_is_not_made_twice(
    db, github, finished_work, queen_checkout, hive_repo, hive_db_url
):
    """A comment GitHub made but whose answer never came (the client's timeout): the
    job is run again, and finds the comment by its marker instead of making another."""
    number, work, job = _ready(github, finished_work, hive_db_url, db, {"docs/a.md": "hello\n"})
    github.set_check(work.head_sha, "unit", "success", hook=False)
    publisher = _impatient_publisher(db, github, queen_checkout, hive_repo)
    github.delay_next(1.5, method="POST", path_end=f"/issues/{number}/comments")
    assert _run(db, publisher).errors == 1  # the comment's answer timed out
    assert len(github.comments_on(number)) == 1  # made, all the same
    jobs_due_now(hive_db_url)
    assert _run(db, publisher).finished == 1
    assert jobs.get(db, job.id).step == Step.DONE  # type: ignore[union-attr]
    (comment,) = github.comments_on(number)
    assert "Merged as" in comment["body"]
    assert github.closed_issues == [number]


def test_a_pull_request_opened_unheard_and_merged_by_a_person_is_the_merge(
    db, github, finished_work, queen_checkout, hive_repo, hive_db_url
):
    """The answer to opening the pull request was lost (a timeout) and a person merged
    it meanwhile: the job tried again finds that merge, at the accepted head, and takes
    it. Before, it looked for an open pull request only and opened a second one, which
    GitHub refuses ("No commits between"; the fake merged it too: hive chaos --forge
    github --seed 3, #1 merged twice)."""
    number, work, job = _ready(github, finished_work, hive_db_url, db, {"docs/a.md": "hello\n"})
    github.set_check(work.head_sha, "unit", "success", hook=False)
    publisher = _impatient_publisher(db, github, queen_checkout, hive_repo)
    github.delay_next(1.5, method="POST", path_end="/pulls")
    assert _run(db, publisher).errors == 1  # the pull request's answer timed out
    (first,) = github.state.pulls
    merged = github.person_merges(first)
    jobs_due_now(hive_db_url)
    assert _run(db, publisher).finished == 1
    assert jobs.get(db, job.id).step == Step.DONE  # type: ignore[union-attr]
    assert list(github.state.pulls) == [first] and github.merge_methods == ["merge"]
    assert _one(hive_db_url, "SELECT merged_sha FROM hive.queen_dispatch") == merged
    assert github.state.issues[number]["state"] == "closed"


def test_a_pull_request_opened_unheard_and_merged_at_another_head_is_escalated(
    db, github, finished_work, queen_checkout, hive_repo, hive_db_url
):
    """The answer to opening the pull request was lost and a person added a commit to
    its branch and merged it: the job tried again finds that merge (its head has the
    accepted head in its history) and escalates it as a person's merge. Before, it
    looked for a merge at the accepted head alone, opened another pull request, and
    GitHub's 422 ("No commits between") came back every 5 s for ever (`hive chaos
    --loop --forge github --size big --seed 27`, #184 and #263)."""
    number, work, job = _ready(github, finished_work, hive_db_url, db, {"docs/a.md": "hello\n"})
    github.set_check(work.head_sha, "unit", "success", hook=False)
    publisher = _impatient_publisher(db, github, queen_checkout, hive_repo)
    github.delay_next(1.5, method="POST", path_end="/pulls")
    assert _run(db, publisher).errors == 1  # the pull request's answer timed out
    (first,) = github.state.pulls
    github.person_commits(f"queen-{number}", "docs/person.md", "not reviewed\n")
    merged = github.person_merges(first)
    jobs_due_now(hive_db_url)
    assert _run(db, publisher).finished == 1
    assert jobs.get(db, job.id).step == Step.SENT_BACK  # type: ignore[union-attr]
    assert list(github.state.pulls) == [first]  # no second pull request
    state, note = _dispatch(hive_db_url)
    assert state == "escalate" and f"merged by a person as {merged[:12]}" in note
    assert _one(hive_db_url, "SELECT merged_sha FROM hive.queen_dispatch") is None
    assert github.state.issues[number]["state"] == "open"


def jobs_due_now(url: str) -> None:
    """The job's claim runs out now (a step that raised is run again after it)."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("UPDATE hive.queen_job SET claim_due_at = now() - interval '1 second'")


def test_a_pull_request_a_person_merged_at_another_head_is_not_taken(
    db, github, forge, finished_work, queen_checkout, hive_repo, hive_db_url
):
    number, work, job = _ready(github, finished_work, hive_db_url, db, {"docs/a.md": "hello\n"})
    github.set_check(work.head_sha, "unit", "success", hook=False)
    real_merge = forge.steps.merge
    by_person: list[str] = []

    def a_person_adds_a_commit_and_merges(ctx: Any, facts: Any, red: Any) -> Any:
        if not by_person:
            (first,) = github.state.pulls
            github.person_commits(f"queen-{number}", "docs/person.md", "not reviewed\n")
            by_person.append(github.person_merges(first))
        return real_merge(ctx, facts, red)

    forge.steps.merge = a_person_adds_a_commit_and_merges  # type: ignore[method-assign]
    publisher = Publisher(
        db, queen_checkout, HiveMetrics(), PublishConfig(str(hive_repo), "main"), forge=forge.steps
    )
    assert _run(db, publisher).finished == 1
    ended = jobs.get(db, job.id)
    assert ended is not None and ended.step == Step.SENT_BACK
    state, note = _dispatch(hive_db_url)
    assert state == "escalate"
    assert f"merged by a person as {by_person[0][:12]}" in note
    assert f"accepted ({work.head_sha[:12]})" in note
    assert _one(hive_db_url, "SELECT merged_sha FROM hive.queen_dispatch") is None
    assert _one(hive_db_url, "SELECT state FROM hive.queen_issue") == "open"
    assert github.state.issues[number]["state"] == "open"
    assert not [c for c in github.comments_on(number) if "Merged as" in c["body"]]
    assert github.merge_methods == ["merge"]  # the person's; the hive merged nothing
