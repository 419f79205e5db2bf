"""Credentials for the forge's git host (HIVE_FORGE=github: a private repository).

A `GitAuth` holds the forge's token and the API URL that says where the forge serves
git; `transport(url, auth)` is dulwich's client for `url`, with HTTP Basic credentials
(user `x-access-token`, the token as password) only when `hive.rules.forge_git.
git_sends_token` says `url` is the forge's git origin. The token goes in the
Authorization header of each request (dulwich attaches it only to requests for the
origin it was given, so a redirect to another host does not carry it); it is never put
in a URL, so never in `.git/config` either. `scrub` takes it out of any text shown.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dulwich.client import GitClient, HTTPUnauthorized, get_transport_and_path

from hive.rules.forge_git import GIT_USER, git_sends_token


@dataclass(frozen=True)
class GitAuth:
    api_url: str
    token: str = field(repr=False)
    username: str = GIT_USER

    def sends_to(self, url: str) -> bool:
        return bool(self.token) and git_sends_token(url, self.api_url)

    def scrub(self, text: str) -> str:
        """`text` with the token replaced by `***` wherever it appears."""
        return text.replace(self.token, "***") if self.token else text


def transport(url: str, auth: GitAuth | None) -> tuple[GitClient, str]:
    """dulwich's client and path for `url`, carrying `auth` when it is meant for
    `url`'s origin."""
    if auth is None or not auth.sends_to(url):
        return get_transport_and_path(url)
    return get_transport_and_path(url, username=auth.username, password=auth.token)


def refusal(err: BaseException, auth: GitAuth | None, url: str) -> str | None:
    """The one line for a remote that refused the credentials (HTTP 401), else None."""
    if not isinstance(err, HTTPUnauthorized):
        return None
    if auth is not None and auth.sends_to(url):
        return (
            "it refused HIVE_GITHUB_TOKEN (HTTP 401): the token is wrong, expired, or "
            "may not read this repository's contents"
        )
    return (
        "it asks for credentials (HTTP 401): a private repository on GitHub needs "
        "HIVE_FORGE=github and HIVE_GITHUB_TOKEN, and HIVE_REPO_URL on GitHub's host"
    )


def scrub(text: str, auth: GitAuth | None) -> str:
    """`text` as one line without the token."""
    line = " ".join(text.split())
    return line if auth is None else auth.scrub(line)
