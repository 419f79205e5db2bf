"""The boundary holds on what the REAL Claude Code commits itself: its scripted tool call
(against the fake Messages API, fake_api.py) runs `git commit -am` over a file outside
the boundary, one inside and a symlink to /etc/passwd; the bee's ending cuts the branch
back before its bundle, judged by the git binary, and the transcript says so."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from hive.store import bundles, transcript
from hive.testing import git, wait_for_ending
from tests.live.runtime.conftest import make_runtime, queue  # noqa: F401
from tests.live.runtime.test_runner import claimer_of

from .fake_api import FakeApi, running
from .test_claude import claude  # noqa: F401 (the fixture: make agents)

pytestmark = [pytest.mark.e2e, pytest.mark.live]

TURN_SECONDS = 90.0
COMMIT = (
    "echo 'rewritten by the agent' > README.md"
    " && echo \"print('the agent')\" > src/app.py"
    " && ln -s /etc/passwd src/passwd && git add src/passwd"
    " && git -c user.name=claude -c user.email=claude@hive.invalid -c commit.gpgsign=false"
    " commit -q -am 'agent: all at once'"
)


@pytest.fixture(scope="module")
def api() -> Iterator[FakeApi]:
    yield from running()


def test_what_claude_code_commits_itself_is_cut_back_to_the_boundary(
    make_runtime: Callable[..., Any],  # noqa: F811
    claude: Path,  # noqa: F811
    api: FakeApi,
    hive_repo: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", api.url)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    rt = make_runtime(AGENT="claude", AGENT_BIN=str(claude), AGENT_PASS_ENV="ANTHROPIC_BASE_URL")
    api.play(("bash", COMMIT))
    queue(rt, 11)
    assert claimer_of(rt).run_once().started == (11,)

    order = wait_for_ending(rt.db, 11, TURN_SECONDS)

    said = [line.text for line in transcript.read(rt.db, order.conversation_id)]
    assert order.outcome == "finished", said
    assert any(line.startswith("tool Bash") for line in said), said
    stored = bundles.get(rt.db, 11)
    assert stored is not None
    path = tmp_path / "queen-11.bundle"
    path.write_bytes(stored.data)
    judge = tmp_path / "judge"
    git("clone", "-q", str(hive_repo), str(judge), cwd=tmp_path)
    git("fetch", "-q", str(path), "queen-11:got", cwd=judge)
    git("fsck", "--strict", cwd=judge)
    assert git("diff", "--name-status", "main..got", cwd=judge).splitlines() == ["M\tsrc/app.py"]
    assert git("show", "got:src/app.py", cwd=judge) == "print('the agent')"
    cut = [line for line in said if line.startswith("cut back to the boundary")]
    assert len(cut) == 1
    assert "README.md is outside the boundary" in cut[0]
    assert "src/passwd is outside the boundary" in cut[0]
