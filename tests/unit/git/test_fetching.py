"""A fetch over git:// asks the server for base's branch alone (protocol v2's ls-refs
with a ref prefix), as git's single-branch clone does: a forge's mirror advertises
thousands of refs (pull requests, tags) that a runner never needs. The server is
`git daemon`; its packet trace says what it was asked and what it sent."""

from __future__ import annotations

from pathlib import Path

from hive.bench.gitdaemon import GitDaemon
from hive.git.repo import open_checkout

from .conftest import GIT, Git, git_env, head_of


def test_a_clone_over_the_wire_asks_for_base_alone_and_is_sent_no_other_ref(
    tmp_path: Path, upstream: Path, git: Git
) -> None:
    for n in range(3):
        git("branch", f"pull-{n}", cwd=upstream)
        git("tag", f"v{n}", cwd=upstream)
    trace = tmp_path / "packets.log"
    home = tmp_path / "home"
    env = git_env(home) | {"GIT_TRACE_PACKET": str(trace)}
    with GitDaemon(upstream.parent, GIT, env) as daemon:
        checkout = open_checkout(daemon.url(upstream.name), tmp_path / "work", "main")

    said = trace.read_text()
    assert checkout.base_sha == head_of(git, upstream, "main")
    assert "ref-prefix refs/heads/main" in said
    sent = [line for line in said.splitlines() if "upload-pack> " in line]
    assert any("refs/heads/main" in line for line in sent)
    assert not any("pull-" in line or "refs/tags/" in line for line in sent)
    checkout.repo.close()
