"""A private repository: every fetch, clone and push to the forge's git host carries the
token as HTTP Basic (user x-access-token), against the real `git http-backend` refusing
without it (tests.fakes.git_http); the token is written nowhere and shown nowhere, and
goes to no other host."""

from __future__ import annotations

import logging
import subprocess
from pathlib import Path

import pytest
from dulwich.repo import Repo

from hive.git.auth import GitAuth
from hive.git.push import Pushed, PushError, push
from hive.git.repo import GitError, deepen_base, open_checkout, refresh_base
from tests.fakes.git_http import GitHttpServer
from tests.fakes.origin import commit_files, make_origin

TOKEN = "ghp_privateTOKENthatMustNeverLeak1234567"
USER = "x-access-token"


def _git(*args: str, cwd: Path) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, check=True
    ).stdout.strip()


@pytest.fixture
def origin(tmp_path: Path) -> Path:
    path = make_origin(tmp_path / "srv" / "origin.git")
    with Repo(str(path)) as repo:
        first = repo.refs[b"refs/heads/main"]
        second = commit_files(repo, {"README.md": b"# two\n"}, [first], "second\n")
        third = commit_files(repo, {"README.md": b"# three\n"}, [second], "third\n")
        repo.refs[b"refs/heads/main"] = third
    return path


@pytest.fixture
def server(origin: Path) -> object:
    with GitHttpServer(origin.parent, user=USER, password=TOKEN) as srv:
        yield srv


def _auth(server: GitHttpServer, token: str = TOKEN) -> GitAuth:
    return GitAuth(f"{server.url}/api/v3", token)


def _no_token_on_disk(root: Path) -> None:
    for path in root.rglob("*"):
        if path.is_file():
            assert TOKEN.encode() not in path.read_bytes(), path


def test_a_private_repository_is_cloned_fetched_and_pushed_with_the_token(
    server: GitHttpServer, origin: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    url = server.url_of("origin.git")
    checkout = open_checkout(url, tmp_path / "work", "main", auth=_auth(server))
    assert checkout.base_sha == _git("rev-parse", "main", cwd=origin)
    config = (Path(checkout.repo.path) / "config").read_text()
    assert f"url = {url}" in config
    # the base moves; the Queen's fetch brings it, with the token again
    with Repo(str(origin)) as repo:
        moved = commit_files(repo, {"a.txt": b"a\n"}, [repo.refs[b"refs/heads/main"]], "a\n")
        repo.refs[b"refs/heads/main"] = moved
    assert refresh_base(checkout.repo, url, "main", auth=checkout.auth) == moved.decode()
    # a push of the merged base lands: the real git reads it on the server
    new = commit_files(checkout.repo, {"b.txt": b"b\n"}, [moved], "b\n").decode()
    assert push(checkout.repo, url, "main", new, moved.decode(), auth=checkout.auth) == Pushed(new)
    assert _git("rev-parse", "main", cwd=origin) == new
    assert _git("show", f"{new}:b.txt", cwd=origin) == "b"
    _git("fsck", "--strict", cwd=origin)
    assert all(seen is not None for seen in server.seen)
    checkout.repo.close()
    _no_token_on_disk(tmp_path / "work")
    assert TOKEN not in caplog.text


def test_a_shallow_clone_of_a_private_repository_deepens_with_the_token(
    server: GitHttpServer, origin: Path, tmp_path: Path
) -> None:
    url = server.url_of("origin.git")
    checkout = open_checkout(url, tmp_path / "work", "main", depth=1, auth=_auth(server))
    first = _git("rev-list", "--max-parents=0", "main", cwd=origin)
    assert first.encode() not in checkout.repo.object_store
    assert deepen_base(checkout.repo, url, "main", [first], auth=checkout.auth)
    checkout.repo.close()


def test_without_the_token_the_refusal_says_what_is_missing(
    server: GitHttpServer, tmp_path: Path
) -> None:
    with pytest.raises(GitError) as refused:
        open_checkout(server.url_of("origin.git"), tmp_path / "work", "main")
    text = str(refused.value)
    assert "\n" not in text
    assert "HTTP 401" in text and "HIVE_GITHUB_TOKEN" in text
    assert server.seen and all(seen is None for seen in server.seen)


def test_a_wrong_token_is_one_clear_line_without_the_token(
    server: GitHttpServer, origin: Path, tmp_path: Path
) -> None:
    wrong = "ghp_wrongTOKEN000000000000000000000000"
    url = server.url_of("origin.git")
    with pytest.raises(GitError) as refused:
        open_checkout(url, tmp_path / "work", "main", auth=_auth(server, wrong))
    text = str(refused.value)
    assert text == (
        f"cannot fetch main from {url}: it refused HIVE_GITHUB_TOKEN (HTTP 401): the token "
        "is wrong, expired, or may not read this repository's contents"
    )
    assert wrong not in repr(refused.value)
    # a refused push too
    repo = Repo.init_bare(str(tmp_path / "pusher"), mkdir=True)
    sha = commit_files(repo, {"c.txt": b"c\n"}, [], "c\n").decode()
    with pytest.raises(PushError) as pushed:
        push(repo, url, "main", sha, None, auth=_auth(server, wrong))
    assert "refused HIVE_GITHUB_TOKEN" in str(pushed.value)
    assert wrong not in str(pushed.value) and "\n" not in str(pushed.value)
    assert _git("rev-parse", "main", cwd=origin) != sha
    repo.close()


def test_the_token_goes_to_no_other_host(server: GitHttpServer, tmp_path: Path) -> None:
    # HIVE_REPO_URL on another host than the forge's (another port is another origin)
    elsewhere = GitAuth("http://127.0.0.1:9/api/v3", TOKEN)
    with pytest.raises(GitError) as refused:
        open_checkout(server.url_of("origin.git"), tmp_path / "work", "main", auth=elsewhere)
    assert "asks for credentials" in str(refused.value)
    assert server.seen and all(seen is None for seen in server.seen)


def test_a_redirect_to_another_host_does_not_carry_the_token(
    server: GitHttpServer, origin: Path, tmp_path: Path
) -> None:
    with GitHttpServer(origin.parent) as other:  # public, and records what it was sent
        server.redirect_to = other.url
        url = server.url_of("origin.git")
        checkout = open_checkout(url, tmp_path / "work", "main", auth=_auth(server))
        assert checkout.base_sha == _git("rev-parse", "main", cwd=origin)
        assert server.seen and all(seen is not None for seen in server.seen)
        assert other.seen and all(seen is None for seen in other.seen)
        checkout.repo.close()
