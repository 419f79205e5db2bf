"""HIVE_FORGE=github with HIVE_PUBLISH=push: the publish job pushes the merge itself,
which tells GitHub nothing, so the night watch comments the merge on the GitHub issue,
naming its sha, and closes it, once."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest

from hive.forge.github.client import GitHubError
from hive.forge.github.watch import Watch
from hive.jobs.publish import PublishConfig, Publisher
from hive.metrics import HiveMetrics
from hive.rules.jobs import JobKind, Step
from hive.store import jobs
from tests.fakes.fake_github import FakeGitHub
from tests.live.forge.test_github_publish import _accept, _one, _run

pytestmark = pytest.mark.live


def _pushed(
    db: Any, github: FakeGitHub, finished_work: Any, queen_checkout: Any, hive_repo: Any, url: str
) -> tuple[int, str]:
    """A GitHub issue whose accepted work the local publish job pushed: its number, the
    merge's sha."""
    number = github.add_issue("say hello", hook=False)
    finished_work(number, {"docs/a.md": "hello\n"}, ["x"])
    with psycopg.connect(url, autocommit=True) as conn:  # as the intake copies it
        conn.execute("UPDATE hive.queen_issue SET labels = '{hive}' WHERE number = %s", (number,))
    _accept(url, number)
    job = jobs.create(db, JobKind.PUBLISH, number, Step.CHECKS, attempt=1).job
    config = PublishConfig(repo_url=str(hive_repo), base="main", checks=(("unit", "true"),))
    publisher = Publisher(db, queen_checkout, HiveMetrics(), config)
    assert _run(db, publisher).finished == 1
    assert jobs.get(db, job.id).step == Step.DONE  # type: ignore[union-attr]
    sha = github.base_sha()
    assert _one(url, "SELECT closed_reason FROM hive.queen_issue") == f"merged as {sha}"
    return number, sha


def _closes(github: FakeGitHub, number: int) -> int:
    return sum(1 for m, p, _ in github.calls if m == "PATCH" and p.endswith(f"/issues/{number}"))


def test_a_pushed_merge_closes_its_github_issue_once_with_a_comment_naming_the_sha(
    db, github, forge, finished_work, queen_checkout, hive_repo, hive_db_url
):
    number, sha = _pushed(db, github, finished_work, queen_checkout, hive_repo, hive_db_url)
    assert github.state.issues[number]["state"] == "open"  # the push told GitHub nothing
    forge.watch.run_once()  # a pull request's merge is closed by its job, not the pass
    assert github.state.issues[number]["state"] == "open"
    watch = Watch(db, forge.repo, "hive", closes_pushed_merges=True)
    assert watch.run_once().closed == 1
    assert github.state.issues[number]["state"] == "closed"
    (comment,) = github.comments_on(number)
    assert comment["body"].startswith(f"Merged as {sha}. Closing this issue.")
    assert "<!-- hive:merged -->" in comment["body"]
    assert watch.run_once().closed == 0  # once
    assert len(github.comments_on(number)) == 1 and _closes(github, number) == 1


def test_a_close_github_refused_is_tried_again_without_a_second_comment(
    db, github, forge, finished_work, queen_checkout, hive_repo, hive_db_url
):
    number, sha = _pushed(db, github, finished_work, queen_checkout, hive_repo, hive_db_url)
    watch = Watch(db, forge.repo, "hive", closes_pushed_merges=True)
    real_close = forge.repo.close_issue
    refused: list[int] = []

    def refuse_once(n: int) -> None:
        if not refused:
            refused.append(n)
            raise GitHubError(502, "Bad Gateway", "PATCH issue")
        real_close(n)

    forge.repo.close_issue = refuse_once  # type: ignore[method-assign]
    assert watch.run_once().closed == 0
    assert github.state.issues[number]["state"] == "open"
    assert watch.run_once().closed == 1
    assert github.state.issues[number]["state"] == "closed"
    (comment,) = github.comments_on(number)
    assert f"Merged as {sha}." in comment["body"]


def test_a_pushed_merge_whose_issue_a_person_closed_is_recorded_without_a_comment(
    db, github, forge, finished_work, queen_checkout, hive_repo, hive_db_url
):
    number, _ = _pushed(db, github, finished_work, queen_checkout, hive_repo, hive_db_url)
    github.state.issues[number]["state"] = "closed"  # closed by hand on GitHub
    watch = Watch(db, forge.repo, "hive", closes_pushed_merges=True)
    assert watch.run_once().closed == 0
    assert github.comments_on(number) == [] and _closes(github, number) == 0
    assert watch.run_once().closed == 0  # recorded: not read again
    reads = [p for m, p, _ in github.calls if m == "GET" and p.endswith(f"/issues/{number}")]
    assert len(reads) == 1
