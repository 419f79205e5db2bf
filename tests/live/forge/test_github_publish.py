"""The publish job with the GitHub forge, on a real PostgreSQL against the fake GitHub:
the accepted head pushed as queen-<n> over smart HTTP, a pull request opened, its checks
read, merged through the API, the issue commented on and closed."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import psycopg
import pytest

from hive.jobs import engine
from hive.jobs.publish import PublishConfig, Publisher
from hive.metrics import HiveMetrics
from hive.rules.jobs import JobKind, Step
from hive.store import jobs, publish, waits
from tests.fakes.fake_github import FakeGitHub
from tests.live.forge.conftest import Forge
from tests.live.review.conftest import Finished
from tests.one_job import run_one_job

pytestmark = pytest.mark.live


def _accept(url: str, issue: int) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            "UPDATE hive.queen_dispatch SET review_state = 'accept', reviewed_at = now()"
            " WHERE issue = %s",
            (issue,),
        )


def _one(url: str, sql: str, *args: Any) -> Any:
    with psycopg.connect(url) as conn:
        row = conn.execute(sql, args).fetchone()
        return None if row is None else row[0]


def _publisher(db: Any, queen_checkout: Any, hive_repo: Any, forge: Forge) -> Publisher:
    cfg = PublishConfig(repo_url=str(hive_repo), base="main")
    return Publisher(db, queen_checkout, HiveMetrics(), cfg, forge=forge.steps)


def _run(db: Any, publisher: Publisher) -> engine.RunResult:
    return run_one_job(db, "test-queen", publisher.handlers(), ttl_seconds=60)


def _ready(
    github: FakeGitHub,
    finished_work: Callable[..., Finished],
    url: str,
    db: Any,
    files: dict[str, str],
) -> tuple[int, Finished, jobs.Job]:
    number = github.add_issue("say hello", hook=False)
    work = finished_work(number, files, ["x"])
    _accept(url, number)
    job = jobs.create(db, JobKind.PUBLISH, number, Step.CHECKS, attempt=1).job
    return number, work, job


def test_green_checks_merge_the_pull_request_and_close_the_issue(
    db, github, forge, finished_work, queen_checkout, hive_repo, hive_db_url
):
    number, work, job = _ready(github, finished_work, hive_db_url, db, {"docs/a.md": "hello\n"})
    publisher = _publisher(db, queen_checkout, hive_repo, forge)
    assert _run(db, publisher).parked == 1  # no checks reported yet: CI gets its time
    assert github.branch_sha(f"queen-{number}") == work.head_sha
    (pr,) = github.state.pulls.values()
    assert pr["head_ref"] == f"queen-{number}" and f"Closes #{number}" in pr["body"]
    assert "waits for CI" in (jobs.get(db, job.id).detail or "")  # type: ignore[union-attr]
    github.set_check(work.head_sha, "unit", "success", "12 passed", hook=False)
    assert waits.resolve(db, f"github:{number}")  # what the check_run webhook does
    assert _run(db, publisher).finished == 1
    assert jobs.get(db, job.id).step == Step.DONE  # type: ignore[union-attr]
    merged = github.base_sha()
    assert pr["merged"] and pr["merge_commit_sha"] == merged
    assert github.merge_methods == ["merge"]
    assert github.state.issues[number]["state"] == "closed"
    (comment,) = github.comments_on(number)
    assert f"Merged as {merged}" in comment["body"] and "<!-- hive:merged -->" in comment["body"]
    assert _one(hive_db_url, "SELECT closed_reason FROM hive.queen_issue") == f"merged as {merged}"
    runs = publish.checks_on(db, number, 1, work.head_sha)
    assert [(r.name, r.result) for r in runs] == [("unit", "pass")]


def test_a_red_check_sends_the_work_back_with_its_name_and_summary(
    db, github, forge, finished_work, queen_checkout, hive_repo, hive_db_url
):
    _number, work, job = _ready(github, finished_work, hive_db_url, db, {"docs/a.md": "hello\n"})
    github.set_check(work.head_sha, "lint", "failure", "E501 line too long", hook=False)
    github.set_check(github.base_sha(), "lint", "success", hook=False)
    before = github.base_sha()
    assert _run(db, _publisher(db, queen_checkout, hive_repo, forge)).finished == 1
    assert jobs.get(db, job.id).step == Step.SENT_BACK  # type: ignore[union-attr]
    state, note = (
        psycopg.connect(hive_db_url)
        .execute("SELECT review_state, review_note FROM hive.queen_dispatch")
        .fetchone()
    )  # type: ignore[misc]
    assert state == "sendback"
    assert note.startswith("check lint failed on pull request #") and note.endswith(
        "E501 line too long"
    )
    assert github.base_sha() == before
    assert not any(p["merged"] for p in github.state.pulls.values())


def test_a_check_red_on_the_base_too_is_not_the_bees_fault(
    db, github, forge, finished_work, queen_checkout, hive_repo, hive_db_url
):
    number, work, job = _ready(github, finished_work, hive_db_url, db, {"docs/a.md": "hello\n"})
    github.set_check(work.head_sha, "unit", "success", hook=False)
    github.set_check(work.head_sha, "lint", "failure", "E501", hook=False)
    github.set_check(github.base_sha(), "lint", "failure", "E501 on main", hook=False)
    publisher = _publisher(db, queen_checkout, hive_repo, forge)
    assert _run(db, publisher).parked == 1
    parked = jobs.get(db, job.id)
    assert parked is not None and parked.step == Step.GATE  # not sent back
    assert "red on main too" in (parked.detail or "") and f"hive approve {number}" in (
        parked.detail or ""
    )
    opened = [i for i in github.state.issues.values() if i["title"] == "Check lint is red on main"]
    assert len(opened) == 1 and "<!-- hive:base red -->" in opened[0]["body"]
    assert _one(hive_db_url, "SELECT review_state FROM hive.queen_dispatch") == "accept"
    # seen again (another look): the issue about the base is not opened twice
    assert publish.approve(db, number, "ada")
    assert _run(db, publisher).finished == 1
    assert len([i for i in github.state.issues.values() if "is red on main" in i["title"]]) == 1
    assert github.state.issues[number]["state"] == "closed"


@pytest.mark.parametrize(
    ("block", "says"),
    [
        ("review", "needs an approving review on GitHub"),
        ("protected", "branch protection holds it"),
    ],
)
def test_a_pull_request_that_will_not_merge_is_one_case_with_the_queens_next_move(
    db, github, forge, finished_work, queen_checkout, hive_repo, hive_db_url, block, says
):
    number, work, job = _ready(github, finished_work, hive_db_url, db, {"docs/a.md": "hello\n"})
    github.set_check(work.head_sha, "unit", "success", hook=False)
    github.block_merge = block
    publisher = _publisher(db, queen_checkout, hive_repo, forge)
    assert _run(db, publisher).parked == 1
    parked = jobs.get(db, job.id)
    # GitHub's mergeable_state `blocked` is both: the merge's refusal names the case
    assert parked is not None and parked.step == Step.PUSH
    assert parked.detail is not None and says in parked.detail
    assert parked.detail.startswith("pull request #")
    github.block_merge = None
    assert waits.resolve(db, f"github:{number}")  # a review's webhook
    assert _run(db, publisher).finished == 1
    assert github.state.issues[number]["state"] == "closed"


def test_a_conflicting_pull_request_sends_the_work_back(
    db, github, forge, finished_work, queen_checkout, hive_repo, hive_db_url
):
    _number, work, job = _ready(github, finished_work, hive_db_url, db, {"docs/a.md": "hello\n"})
    github.set_check(work.head_sha, "unit", "success", hook=False)
    github.block_merge = "conflict"
    assert _run(db, _publisher(db, queen_checkout, hive_repo, forge)).finished == 1
    assert jobs.get(db, job.id).step == Step.SENT_BACK  # type: ignore[union-attr]
    note = _one(hive_db_url, "SELECT review_note FROM hive.queen_dispatch")
    assert "conflicts with main" in note


def test_a_head_moved_by_someone_else_is_pushed_again_and_checked_again(
    db, github, forge, finished_work, queen_checkout, hive_repo, hive_db_url
):
    from dulwich.repo import Repo

    from tests.fakes.origin import commit_files

    number, work, job = _ready(github, finished_work, hive_db_url, db, {"docs/a.md": "hello\n"})
    github.set_check(work.head_sha, "unit", "success", hook=False)
    publisher = _publisher(db, queen_checkout, hive_repo, forge)
    steps = forge.steps
    real_merge = steps.merge
    moved = []

    def someone_pushes_first(ctx: Any, facts: Any, red: Any) -> Any:
        if not moved:
            with Repo(str(github.repo_path)) as repo:
                other = commit_files(repo, {"x.md": b"x\n"}, [work.head_sha.encode()], "other\n")
                repo.refs[f"refs/heads/queen-{number}".encode()] = other
            moved.append(other)
        return real_merge(ctx, facts, red)

    steps.merge = someone_pushes_first  # type: ignore[method-assign]
    assert _run(db, publisher).finished == 1
    assert jobs.get(db, job.id).step == Step.DONE  # type: ignore[union-attr]
    (_pr,) = [p for p in github.state.pulls.values() if p["merged"]]
    assert github.branch_sha(f"queen-{number}") == work.head_sha  # the accepted head again


def test_a_restarted_job_never_merges_or_comments_twice(
    db, github, forge, finished_work, queen_checkout, hive_repo, hive_db_url
):
    number, work, _job = _ready(github, finished_work, hive_db_url, db, {"docs/a.md": "hello\n"})
    github.set_check(work.head_sha, "unit", "success", hook=False)
    publisher = _publisher(db, queen_checkout, hive_repo, forge)
    real_close = forge.steps.after_close
    crashed = []

    def crash_once(ctx: Any, facts: Any, sha: str) -> None:
        real_close(ctx, facts, sha)
        if not crashed:
            crashed.append(1)
            raise RuntimeError("killed after the comment")

    forge.steps.after_close = crash_once  # type: ignore[method-assign]
    assert _run(db, publisher).errors == 1
    with psycopg.connect(hive_db_url, autocommit=True) as conn:  # the claim runs out
        conn.execute("UPDATE hive.queen_job SET claim_due_at = now() - interval '1 s'")
    assert _run(db, publisher).finished == 1
    assert len(github.comments_on(number)) == 1
    assert len(github.merge_methods) == 1


def test_a_merge_that_landed_before_a_restart_is_recorded_not_repeated(
    db, github, forge, finished_work, queen_checkout, hive_repo, hive_db_url
):
    number, work, job = _ready(github, finished_work, hive_db_url, db, {"docs/a.md": "hello\n"})
    github.set_check(work.head_sha, "unit", "success", hook=False)
    publisher = _publisher(db, queen_checkout, hive_repo, forge)
    real_push = forge.steps.push
    killed = []

    def merge_then_die(ctx: Any, facts: Any, red: Any) -> Any:
        if not killed:
            killed.append(1)
            pr = forge.repo.open_pull(f"queen-{number}")
            assert pr is not None
            forge.repo.merge(pr.number, work.head_sha, "merge", "t")
            raise RuntimeError("killed after GitHub merged, before the journal")
        return real_push(ctx, facts, red)

    forge.steps.push = merge_then_die  # type: ignore[method-assign]
    assert _run(db, publisher).errors == 1
    with psycopg.connect(hive_db_url, autocommit=True) as conn:
        conn.execute("UPDATE hive.queen_job SET claim_due_at = now() - interval '1 s'")
    assert _run(db, publisher).finished == 1
    assert jobs.get(db, job.id).step == Step.DONE  # type: ignore[union-attr]
    assert len(github.merge_methods) == 1
    merged = github.base_sha()
    assert _one(hive_db_url, "SELECT merged_sha FROM hive.queen_dispatch") == merged


def test_a_head_moved_between_the_look_and_the_merge_is_not_merged(
    db, github, forge, finished_work, queen_checkout, hive_repo, hive_db_url
):
    from dulwich.repo import Repo

    from tests.fakes.origin import commit_files

    number, work, job = _ready(github, finished_work, hive_db_url, db, {"docs/a.md": "hello\n"})
    github.set_check(work.head_sha, "unit", "success", hook=False)
    publisher = _publisher(db, queen_checkout, hive_repo, forge)
    real_merge = forge.steps.merge
    moved: list[bytes] = []

    def look_then_someone_pushes(ctx: Any, facts: Any, red: Any) -> Any:
        answer = real_merge(ctx, facts, red)
        if not moved:
            with Repo(str(github.repo_path)) as repo:
                other = commit_files(repo, {"x.md": b"x\n"}, [work.head_sha.encode()], "other\n")
                repo.refs[f"refs/heads/queen-{number}".encode()] = other
            moved.append(other)
        return answer

    forge.steps.merge = look_then_someone_pushes  # type: ignore[method-assign]
    assert _run(db, publisher).finished == 1
    assert jobs.get(db, job.id).step == Step.DONE  # type: ignore[union-attr]
    with Repo(str(github.repo_path)) as repo:
        tree = repo[repo[github.base_sha().encode()].tree]
        assert b"x.md" not in tree  # only the accepted head was merged (compare-and-swap)
