"""The accepted head goes to GitHub as branch `queen-<n>`, over smart HTTP with dulwich.

The token travels in the Authorization header of the push (HTTP Basic, user
`x-access-token`, as GitHub takes a token for git), never in the URL, and only to the
forge's git host (`hive.git.auth`: a `clone_url` on another host gets no token). The
branch is the hive's own: whatever it points at now is replaced by the accepted head,
still as a compare-and-swap on what the remote showed (a push racing another is not
lost in silence: it is tried again on what it then shows).
"""

from __future__ import annotations

from dulwich.repo import Repo

from hive.git.auth import GitAuth
from hive.git.push import Moved, PushError, push

FORCE_TRIES = 3


def push_branch(repo: Repo, url: str, auth: GitAuth, branch: str, sha: str) -> str:
    """Point `branch` of `url` at `sha` of `repo`; the sha. Raises PushError."""
    old: str | None = None
    for _ in range(FORCE_TRIES):
        out = push(repo, url, branch, sha, old, auth=auth)
        if not isinstance(out, Moved):
            return out.sha
        old = out.remote_sha
    raise PushError(f"{branch} kept moving under the push of {sha[:12]}")
