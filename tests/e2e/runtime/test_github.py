"""The GitHub forge with real processes: a Queen (`hive serve`, HIVE_FORGE=github) and a
runner against the fake GitHub on 127.0.0.1. A labelled issue is worked by a bee,
reviewed, pushed as queen-1 over smart HTTP, opened as a pull request, checked by the
fake's CI, merged through the API and closed with a comment; a Queen stopped by SIGTERM
mid-wait is replaced and the work lands once. The token is in no process's log."""

from __future__ import annotations

import signal
from collections.abc import Iterator

import pytest

from hive.testing import git
from tests.fakes.fake_github import FakeGitHub

from .harness import World

pytestmark = [pytest.mark.e2e, pytest.mark.live]

TOKEN = "ghp_e2eTOKENthatMustNeverLeak1357913579"
BODY = """Append a line.

## Boundary
- files/f1.txt

## Criteria
- file `files/f1.txt` contains `issue 1 turn`
"""


@pytest.fixture
def github(world: World) -> Iterator[FakeGitHub]:
    with FakeGitHub(world.upstream, token=TOKEN) as gh:
        yield gh


def _forge(github: FakeGitHub) -> dict[str, str]:
    return {
        "HIVE_FORGE": "github",
        "HIVE_PUBLISH": "github",
        "HIVE_GITHUB_REPO": github.full_name,
        "HIVE_GITHUB_TOKEN": TOKEN,
        "HIVE_GITHUB_API_URL": github.api_url,
        "HIVE_GITHUB_POLL_SECONDS": "0.5",
        "HIVE_REVIEWER_AGENT": "demo",
    }


def test_a_labelled_issue_is_merged_on_github_by_real_processes(
    world: World, github: FakeGitHub
) -> None:
    reports: list[str] = []

    def ci(branch: str, sha: str) -> list[tuple[str, str | None, str]]:
        reports.append(sha)
        return [("unit", None, "")]  # running: the Queen is stopped while her job waits

    github.ci = ci
    assert github.add_issue("Append a line", BODY, ["hive"]) == 1
    queen = world.queen(**_forge(github))
    world.runner("runner-a")
    world.wait(lambda: reports or None, 90, "the accepted head pushed to GitHub")
    world.wait(
        lambda: world.db.execute(
            "SELECT 1 FROM hive.queen_job WHERE state = 'parked' AND step = 'checks'"
        ).fetchone(),
        30,
        "the publish job parked on the running check",
    )
    queen.send(signal.SIGTERM)
    assert world.exit_code(queen, 30) == 0
    github.set_check(reports[0], "unit", "success", "12 passed", hook=False)
    world.queen("queen-2", **_forge(github))
    sha = world.wait(lambda: world.merged(1), 60, "#1 merged through the pull request")
    assert github.base_sha() == sha
    assert "issue 1 turn" in git("show", f"{sha}:files/f1.txt", cwd=world.upstream)
    git("fsck", "--strict", cwd=world.upstream)
    assert len(github.merge_methods) == 1  # merged once
    (pr,) = github.state.pulls.values()
    assert pr["merged"] and pr["head_ref"] == "queen-1"
    world.wait(lambda: github.state.issues[1]["state"] == "closed" or None, 30, "#1 closed")
    assert [c["body"].splitlines()[0] for c in github.comments_on(1)] == [
        f"Merged as {sha} (pull request #{pr['number']}). Closing this issue."
    ]
    world.cleanup()
    for log in world.logs.iterdir():
        assert TOKEN not in log.read_text(errors="replace"), log.name
