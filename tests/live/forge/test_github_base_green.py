"""The issue the Queen opened about a check red on the base closes, once, when the gate
sees that check pass again: in the base's checks it reads beside a red head, or in the
checks of work merged with it passing. While the check is red it stays open."""

from __future__ import annotations

from typing import Any

import pytest

from hive.rules.forge_checks import CheckFact, CheckState
from hive.rules.forge_notes import Note
from hive.rules.jobs import Step
from hive.store import forge as forge_rows
from hive.store import jobs, publish
from tests.fakes.fake_github import FakeGitHub
from tests.live.forge.test_github_publish import _publisher, _ready, _run

pytestmark = pytest.mark.live

RED_TITLE = "Check lint is red on main"


def _red_issues(github: FakeGitHub) -> list[dict[str, Any]]:
    return [i for i in github.state.issues.values() if i["title"] == RED_TITLE]


def _closes(github: FakeGitHub, number: int) -> int:
    """How many times the issue was closed through the API."""
    return sum(1 for m, p, _ in github.calls if m == "PATCH" and p.endswith(f"/issues/{number}"))


def _open_red(db: Any) -> bool:
    return forge_rows.note(db, "check:lint", Note.BASE_RED.value) is not None


def test_the_issue_about_a_red_base_closes_once_when_the_base_shows_the_check_green(
    db, github, forge, finished_work, queen_checkout, hive_repo, hive_db_url
):
    publisher = _publisher(db, queen_checkout, hive_repo, forge)
    first, work, job = _ready(github, finished_work, hive_db_url, db, {"docs/a.md": "a\n"})
    github.set_check(work.head_sha, "lint", "failure", "E501", hook=False)
    github.set_check(github.base_sha(), "lint", "failure", "E501 on main", hook=False)
    assert _run(db, publisher).parked == 1  # inherited: the gate waits for a person
    (run,) = publish.checks_on(db, first, 1, work.head_sha)
    assert run.inherited and run.output_tail.startswith("also red on main: not this work's")
    parked = jobs.get(db, job.id)
    assert parked is not None and "check lint is red on main too, not by this work" in (
        parked.detail or ""
    )
    (red,) = _red_issues(github)
    assert red["state"] == "open" and _open_red(db)
    # the base is fixed; the next work is red on a check of its own, so its gate reads
    # the base's checks and sees lint pass there
    github.set_check(github.base_sha(), "lint", "success", hook=False)
    github.set_check(github.base_sha(), "unit", "success", hook=False)
    for n, path in ((2, "docs/b.md"), (3, "docs/c.md")):
        _n, work, job = _ready(github, finished_work, hive_db_url, db, {path: f"{n}\n"})
        github.set_check(work.head_sha, "unit", "failure", "1 failed", hook=False)
        assert _run(db, publisher).finished == 1
        assert jobs.get(db, job.id).step == Step.SENT_BACK  # type: ignore[union-attr]
    assert red["state"] == "closed" and _closes(github, red["number"]) == 1
    (comment,) = github.comments_on(red["number"])  # the second sighting said nothing
    assert comment["body"].startswith("The check `lint` passes on `main` again (seen on pull")
    assert "<!-- hive:base green -->" in comment["body"]
    assert not _open_red(db)
    assert len(_red_issues(github)) == 1


def test_the_issue_about_a_red_base_closes_when_work_merges_with_the_check_passing(
    db, github, forge, finished_work, queen_checkout, hive_repo, hive_db_url
):
    opened = forge.watch.base_red(CheckFact("lint", CheckState.FAIL, "E501"), "main", 1)
    publisher = _publisher(db, queen_checkout, hive_repo, forge)
    merges = []
    for path in ("docs/a.md", "docs/b.md"):
        number, work, job = _ready(github, finished_work, hive_db_url, db, {path: "x\n"})
        github.set_check(work.head_sha, "lint", "success", hook=False)
        assert _run(db, publisher).finished == 1
        assert jobs.get(db, job.id).step == Step.DONE  # type: ignore[union-attr]
        merges.append(github.base_sha())
        assert github.state.issues[number]["state"] == "closed"
    assert github.state.issues[opened]["state"] == "closed"
    assert _closes(github, opened) == 1  # the second merge closed nothing more
    (comment,) = github.comments_on(opened)
    assert f"merged as {merges[0]}" in comment["body"]
    assert not _open_red(db)


def test_the_issue_about_a_red_base_stays_open_while_the_check_is_red(
    db, github, forge, finished_work, queen_checkout, hive_repo, hive_db_url
):
    number, work, job = _ready(github, finished_work, hive_db_url, db, {"docs/a.md": "a\n"})
    github.set_check(work.head_sha, "unit", "success", hook=False)
    github.set_check(work.head_sha, "lint", "failure", "E501", hook=False)
    github.set_check(github.base_sha(), "lint", "failure", "E501 on main", hook=False)
    github.set_check(github.base_sha(), "unit", "success", hook=False)
    publisher = _publisher(db, queen_checkout, hive_repo, forge)
    assert _run(db, publisher).parked == 1
    assert publish.approve(db, number, "ada")  # merged with lint still red
    assert _run(db, publisher).finished == 1
    assert jobs.get(db, job.id).step == Step.DONE  # type: ignore[union-attr]
    (red,) = _red_issues(github)
    assert red["state"] == "open" and github.comments_on(red["number"]) == []
    assert _open_red(db)


def test_a_close_github_refused_is_tried_again_at_the_next_sighting(
    db, github, forge, finished_work, queen_checkout, hive_repo, hive_db_url
):
    from hive.forge.github.client import GitHubError

    opened = forge.watch.base_red(CheckFact("lint", CheckState.FAIL, "E501"), "main", 1)
    real_close = forge.repo.close_issue
    refused: list[int] = []

    def refuse_once(number: int) -> None:
        if number == opened and not refused:
            refused.append(number)
            raise GitHubError(502, "Bad Gateway", "PATCH issue")
        real_close(number)

    forge.repo.close_issue = refuse_once  # type: ignore[method-assign]
    passing = [CheckFact("lint", CheckState.PASS)]
    assert forge.watch.base_green(passing, "main", 7) == []
    assert github.state.issues[opened]["state"] == "open" and _open_red(db)
    assert forge.watch.base_green(passing, "main", 8) == [("lint", opened)]
    assert github.state.issues[opened]["state"] == "closed" and not _open_red(db)
    (comment,) = github.comments_on(opened)  # said once, edited to the later sighting
    assert "seen on pull request #8" in comment["body"]
    assert forge.watch.base_green(passing, "main", 9) == []
    assert len(github.comments_on(opened)) == 1
