"""The accepted head pushed to the fake GitHub over smart HTTP, the token only in the
Authorization header."""

from __future__ import annotations

import pytest
from dulwich.repo import Repo

from hive.forge.github.push import push_branch
from hive.git.auth import GitAuth
from hive.git.push import PushError
from tests.fakes.origin import commit_files
from tests.unit.forge.conftest import TOKEN


def _clone_with_commit(github, tmp_path, text: bytes) -> tuple[Repo, str]:
    repo = Repo.init(str(tmp_path / "clone"), mkdir=True)
    with Repo(str(github.repo_path)) as origin:
        base = origin.refs[b"refs/heads/main"]
        for sha in origin.object_store:
            repo.object_store.add_object(origin.object_store[sha])
    return repo, commit_files(repo, {"README.md": text}, [base], "work\n").decode()


def test_a_branch_is_pushed_and_replaced_by_a_later_head(github, tmp_path):
    repo, first = _clone_with_commit(github, tmp_path, b"# one\n")
    auth = GitAuth(github.api_url, TOKEN)
    assert push_branch(repo, github.clone_url, auth, "queen-3", first) == first
    assert github.branch_sha("queen-3") == first
    second = commit_files(repo, {"README.md": b"# two\n"}, [first.encode()], "more\n").decode()
    push_branch(repo, github.clone_url, auth, "queen-3", second)
    assert github.branch_sha("queen-3") == second
    assert github.branch_sha("main") != second


def test_a_refused_push_names_neither_the_token_nor_a_url_with_it(github, tmp_path):
    repo, first = _clone_with_commit(github, tmp_path, b"# one\n")
    wrong = GitAuth(github.api_url, "not-the-token-xyz")
    with pytest.raises(PushError) as refused:
        push_branch(repo, github.clone_url, wrong, "queen-3", first)
    assert "not-the-token-xyz" not in str(refused.value)
    assert github.branch_sha("queen-3") is None
