"""The fake GitHub's merge never undoes a push that landed on the base while it merged,
as GitHub's does not, and the Queen looks again at a merge GitHub refused for it (the
60-issue `hive chaos --loop --forge github` run, seed 27: a person's push to main was
lost under a pull request's merge, and #20's bundle, cut from that push, carried its
file)."""

from __future__ import annotations

from typing import Any

import pytest
from dulwich.repo import Repo

import tests.fakes.fake_github as fake
from hive.forge.github.api import MergeRefused
from hive.rules.forge_stuck import Stuck, stuck_of_refusal
from tests.fakes.fake_github import BASE_MODIFIED, FakeGitHub
from tests.live.forge.conftest import Forge

pytestmark = pytest.mark.live


def test_a_push_that_lands_while_github_merges_is_kept_and_the_merge_refused(
    github: FakeGitHub, forge: Forge, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Repo(str(github.repo_path)) as repo:
        repo.refs[b"refs/heads/queen-1"] = repo.refs[b"refs/heads/main"]
    head = github.person_commits("queen-1", "docs/q.md", "q\n")
    number = forge.repo.create_pull("#1", "queen-1", "main", "Closes #1").number
    real = fake.merge
    pushed: list[str] = []

    def a_push_lands_meanwhile(*args: Any, **kwargs: Any) -> Any:
        done = real(*args, **kwargs)
        pushed.append(github.person_commits("main", "people/p.txt", "a person\n"))
        return done

    monkeypatch.setattr(fake, "merge", a_push_lands_meanwhile)
    refused = forge.repo.merge(number, head, "merge", "Merge #1")
    assert refused == MergeRefused(405, BASE_MODIFIED)
    assert stuck_of_refusal(refused.status, refused.message) == Stuck.COMPUTING
    assert github.branch_sha("main") == pushed[0]  # the push is kept
    monkeypatch.setattr(fake, "merge", real)
    merged = forge.repo.merge(number, head, "merge", "Merge #1")  # looked at again
    assert isinstance(merged, str) and github.branch_sha("main") == merged
    with Repo(str(github.repo_path)) as repo:
        assert repo[repo[merged.encode()].parents[0]].id.decode() == pushed[0]
