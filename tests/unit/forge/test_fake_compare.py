"""The fake GitHub's compare (`GET /repos/O/R/compare/BASE...HEAD`) on a history made by
the git binary, each status against `git rev-list --left-right --count`: HEAD ahead of
BASE, behind it, the same, or diverged, by branch or by sha; an unknown commit is 404.
The hive asks it whether a merged pull request's head has a bee's head in its history
(`Repository.has`)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from hive.forge.github.api import Repository
from hive.forge.github.client import GitHubClient, GitHubError
from tests.fakes.fake_github import FakeGitHub
from tests.unit.forge.conftest import TOKEN


def _git(cwd: Path, *args: str) -> str:
    env = {
        "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com",
        "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(cwd), "PATH": "/usr/bin:/bin",
    }  # fmt: skip
    done = subprocess.run(
        ["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


@pytest.fixture
def history(github: FakeGitHub, tmp_path: Path) -> dict[str, str]:
    """Branches pushed into the fake's repository by git: `two-ahead` is main and two
    commits, `one-aside` main and one other commit. Returns each name's sha."""
    work = tmp_path / "clone"
    _git(tmp_path, "clone", "-q", str(github.repo_path), str(work))
    shas = {"main": _git(work, "rev-parse", "HEAD")}
    for branch, commits in (("two-ahead", 2), ("one-aside", 1)):
        _git(work, "checkout", "-q", "-b", branch, "main")
        for n in range(commits):
            (work / f"{branch}-{n}.md").write_text(f"{branch} {n}\n")
            _git(work, "add", ".")
            _git(work, "commit", "-q", "-m", f"{branch} {n}")
        shas[branch] = _git(work, "rev-parse", "HEAD")
        _git(work, "push", "-q", "origin", branch)
    shas["one-ahead"] = _git(work, "rev-parse", "two-ahead~1")
    return shas


def _compare(github: FakeGitHub, base: str, head: str) -> dict:
    client = GitHubClient(github.api_url, TOKEN)
    return client.request("GET", f"/repos/{github.full_name}/compare/{base}...{head}").data


def _git_counts(github: FakeGitHub, base: str, head: str) -> tuple[int, int]:
    """(ahead_by, behind_by) as git counts them: HEAD's commits not in BASE, and back."""
    behind, ahead = _git(
        github.repo_path, "rev-list", "--left-right", "--count", f"{base}...{head}"
    ).split()
    return int(ahead), int(behind)


@pytest.mark.parametrize(
    ("base", "head", "status"),
    [
        ("main", "two-ahead", "ahead"),
        ("two-ahead", "main", "behind"),
        ("main", "main", "identical"),
        ("two-ahead", "one-aside", "diverged"),
        ("one-aside", "two-ahead", "diverged"),
    ],
)
def test_compare_by_branch_says_what_git_says(github, history, base, head, status):
    got = _compare(github, base, head)
    assert got["status"] == status
    assert (got["ahead_by"], got["behind_by"]) == _git_counts(github, base, head)


def test_compare_by_sha_says_what_git_says(github, history):
    one_ahead, two_ahead = history["one-ahead"], history["two-ahead"]
    got = _compare(github, one_ahead, two_ahead)
    assert (got["status"], got["ahead_by"], got["behind_by"]) == ("ahead", 1, 0)
    got = _compare(github, two_ahead, one_ahead)
    assert (got["status"], got["ahead_by"], got["behind_by"]) == ("behind", 0, 1)
    got = _compare(github, two_ahead, two_ahead)
    assert (got["status"], got["ahead_by"], got["behind_by"]) == ("identical", 0, 0)
    got = _compare(github, history["one-aside"], one_ahead)
    assert (got["status"], got["ahead_by"], got["behind_by"]) == ("diverged", 1, 1)


def test_compare_of_an_unknown_commit_is_not_found(github, history):
    with pytest.raises(GitHubError, match="404"):
        _compare(github, "main", "0" * 40)


def test_a_head_has_the_commits_it_is_ahead_of_or_the_same_as(github, history):
    repo = Repository(GitHubClient(github.api_url, TOKEN), github.full_name)
    assert repo.has(history["two-ahead"], history["main"])  # ahead
    assert repo.has(history["main"], history["main"])  # identical
    assert not repo.has(history["main"], history["two-ahead"])  # behind
    assert not repo.has(history["one-aside"], history["two-ahead"])  # diverged
