"""The demo agent: its form, and its commit on a real git worktree."""

from __future__ import annotations

import signal
from collections.abc import Callable
from pathlib import Path

import pytest

import hive.agents.demo as demo_module
from hive.agents import ENDED_BADLY, FINISHED, STOPPED, Turn
from hive.agents.demo import EXIT_STOPPED, Instruction, boundary_from, parse, path_problem, run
from hive.testing import git

from .conftest import Recorder

Start = Callable[..., Turn]


@pytest.fixture
def repo_worktree(tmp_path: Path) -> Path:
    """A repository made by the git binary, and a worktree on branch queen-7."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git("init", "-q", cwd=repo)
    (repo / "README").write_text("hello\n")
    git("add", "README", cwd=repo)
    git("commit", "-q", "-m", "base", cwd=repo)
    git("worktree", "add", "-q", "-b", "queen-7", str(tmp_path / "queen-7"), cwd=repo)
    return tmp_path / "queen-7"


def demo(start: Start, worktree: Path, brief: str, **changes: object) -> Turn:
    return start("demo", worktree=worktree, brief=brief, **changes)


def test_parse_reads_the_documented_form_and_ignores_prose() -> None:
    found, problems = parse(
        "Please say hello.\n"
        "write `docs/hello.md`: Hello, world\n"
        "  append `docs/hello.md`:again: with colons\n"
        "sleep 1.5\n"
        "Thanks\n"
    )
    assert problems == []
    assert found == [
        Instruction(2, "write", path="docs/hello.md", text="Hello, world"),
        Instruction(3, "append", path="docs/hello.md", text="again: with colons"),
        Instruction(4, "sleep", seconds=1.5),
    ]


@pytest.mark.parametrize(
    "line",
    ["write docs/a.md: no backticks", "append `docs/a.md` no colon", "sleep forever", "sleep 3601"],
)
def test_parse_reports_a_malformed_line(line: str) -> None:
    found, problems = parse(line)
    assert found == []
    assert len(problems) == 1 and problems[0].startswith("line 1 ")


@pytest.mark.parametrize(
    ("path", "boundary", "problem"),
    [
        ("docs/a.md", ("docs",), None),
        ("docs", ("docs",), None),
        ("src/app.py", ("docs", "src/app.py"), None),
        ("anything/at/all", (".",), None),
        ("docsx/a.md", ("docs",), "outside the boundary"),
        ("src/other.py", ("src/app.py",), "outside the boundary"),
        ("docs/../etc/passwd", ("docs",), "outside the boundary"),
        ("../escape", (".",), "not a relative path"),
        ("/etc/passwd", (".",), "not a relative path"),
        (".git/config", (".",), "inside .git"),
        ("a.md", (), "outside the boundary"),
    ],
)
def test_path_problem_keeps_to_the_boundary(
    path: str, boundary: tuple[str, ...], problem: str | None
) -> None:
    answer = path_problem(path, boundary)
    assert answer is None if problem is None else (answer is not None and problem in answer)


def test_demo_commits_the_change_on_a_real_worktree(
    start: Start, recorder: Recorder, repo_worktree: Path
) -> None:
    brief = (
        "Issue #7: say hello\n"
        "write `docs/hello.md`: Hello\n"
        "append `docs/hello.md`: world\n"
        "write `src/app.py`: print('hi')\n"
    )
    turn = demo(start, repo_worktree, brief)
    assert turn.wait(30), recorder.lines
    assert turn.outcome == FINISHED, recorder.lines
    assert (repo_worktree / "docs/hello.md").read_text() == "Hello\nworld\n"
    log = git("log", "--format=%an <%ae>|%s", "queen-7", cwd=repo_worktree)
    assert log.splitlines() == [
        "hive demo <demo@hive.invalid>|demo: issue #7",
        "Ada <ada@example.com>|base",
    ]
    shown = git("show", "--name-only", "--format=", "HEAD", cwd=repo_worktree).split()
    assert sorted(shown) == ["docs/hello.md", "src/app.py"]
    assert git("status", "--porcelain", cwd=repo_worktree) == ""
    git("fsck", "--strict", cwd=repo_worktree)  # a bad object fails the test
    assert turn.ending is not None and turn.ending.usage is not None
    assert turn.ending.usage.provider == "demo"


def test_demo_skips_and_reports_paths_outside_the_boundary(
    start: Start, recorder: Recorder, repo_worktree: Path
) -> None:
    brief = "write `docs/a.md`: in\nwrite `README`: out\nwrite `../evil`: out\n"
    turn = demo(start, repo_worktree, brief)
    assert turn.wait(30) and turn.outcome == FINISHED, recorder.lines
    out = recorder.texts("stdout")
    assert "demo: skipped line 2: README is outside the boundary" in out
    assert any("../evil is not a relative path" in text for text in out)
    assert (repo_worktree / "README").read_text() == "hello\n"
    assert not (repo_worktree.parent / "evil").exists()
    assert git("show", "--name-only", "--format=", "HEAD", cwd=repo_worktree).split() == [
        "docs/a.md"
    ]


def test_demo_does_not_write_through_a_symlink(
    start: Start, recorder: Recorder, repo_worktree: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (repo_worktree / "docs").symlink_to(outside)
    turn = demo(start, repo_worktree, "write `docs/a.md`: through the link\n")
    assert turn.wait(30)
    assert turn.outcome == ENDED_BADLY
    assert "demo: skipped line 1: docs/a.md goes through a symlink" in recorder.texts("stdout")
    assert list(outside.iterdir()) == []


def test_demo_runs_no_hook(start: Start, recorder: Recorder, repo_worktree: Path) -> None:
    git_dir = repo_worktree.parent / "repo" / ".git"
    marker = repo_worktree.parent / "hook-ran"
    # git reads a worktree's hooks from the common directory, dulwich from its own
    for hooks in (git_dir / "hooks", git_dir / "worktrees" / "queen-7" / "hooks"):
        hooks.mkdir(exist_ok=True)
        for name in ("pre-commit", "commit-msg", "post-commit"):
            hook = hooks / name
            hook.write_text(f"#!/bin/sh\ntouch {marker}\nexit 1\n")
            hook.chmod(0o755)
    turn = demo(start, repo_worktree, "write `docs/a.md`: no hooks\n")
    assert turn.wait(30) and turn.outcome == FINISHED, recorder.lines
    assert not marker.exists()


def test_a_malformed_body_is_reported_not_a_crash(
    start: Start, recorder: Recorder, repo_worktree: Path
) -> None:
    turn = demo(start, repo_worktree, "write the docs please\nsleep a bit\n")
    assert turn.wait(30)
    assert turn.ending is not None
    assert (turn.outcome, turn.ending.exit_code) == (ENDED_BADLY, 1)
    out = recorder.texts("stdout")
    assert any("line 1 'write the docs please' is not" in text for text in out)
    assert any(text.startswith("demo: nothing to do") for text in out)
    assert recorder.texts("stderr") == [], "no traceback"
    assert git("log", "--format=%s", cwd=repo_worktree).splitlines() == ["base"]


def test_writing_what_is_already_there_finishes_with_nothing_to_commit(
    start: Start, recorder: Recorder, repo_worktree: Path
) -> None:
    turn = demo(start, repo_worktree, "write `README`: hello\n", boundary=("README",))
    assert turn.wait(30) and turn.outcome == FINISHED, recorder.lines
    assert "demo: nothing to commit: the files hold it" in recorder.texts("stdout")
    assert git("log", "--format=%s", cwd=repo_worktree).splitlines() == ["base"]


def test_sigterm_during_sleep_ends_the_demo_promptly_and_leaves_work_uncommitted(
    start: Start, recorder: Recorder, repo_worktree: Path
) -> None:
    brief = "write `docs/a.md`: first\nsleep 30\nwrite `docs/b.md`: second\n"
    turn = demo(start, repo_worktree, brief)
    assert recorder.wait_for_text("demo: sleeping 30 s", 30), recorder.lines
    assert turn.stop("drain hand-back")
    assert not any("SIGKILL" in text for text in recorder.texts("hive")), "it needed SIGKILL"
    assert turn.ending is not None
    assert (turn.outcome, turn.ending.exit_code) == (STOPPED, EXIT_STOPPED)
    assert "demo: stopped by SIGTERM; not committed: docs/a.md" in recorder.texts("stdout")
    assert (repo_worktree / "docs/a.md").read_text() == "first\n"
    assert not (repo_worktree / "docs/b.md").exists()
    assert git("status", "--porcelain", cwd=repo_worktree).split() == ["??", "docs/"]
    assert git("log", "--format=%s", cwd=repo_worktree).splitlines() == ["base"]


def test_the_demo_agent_is_a_process_group_like_any_command(
    start: Start, recorder: Recorder, repo_worktree: Path
) -> None:
    turn = demo(start, repo_worktree, "sleep 30\n")
    assert recorder.wait_for_text("demo: sleeping", 30)
    assert turn.kill_stops_it and turn.pgid == turn.pid


def test_demo_finds_the_body_when_the_brief_does_not_quote_it(
    start: Start, recorder: Recorder, repo_worktree: Path
) -> None:
    body = "append `docs/a.md`: once\n"
    for brief in ("Work on issue 7.", f"Work on issue 7.\n\n{body}"):
        turn = demo(start, repo_worktree, brief, body=body)
        assert turn.wait(30) and turn.outcome == FINISHED, recorder.lines
    assert (repo_worktree / "docs/a.md").read_text() == "once\nonce\n", "once per turn"


def test_a_path_it_cannot_write_is_reported_and_the_rest_committed(
    start: Start, recorder: Recorder, repo_worktree: Path
) -> None:
    (repo_worktree / "docs" / "taken").mkdir(parents=True)
    brief = "write `docs/taken`: a directory is in the way\nwrite `docs/b.md`: fine\n"
    turn = demo(start, repo_worktree, brief)
    assert turn.wait(30) and turn.outcome == FINISHED, recorder.lines
    assert "demo: skipped line 1: cannot write docs/taken: Is a directory" in recorder.texts(
        "stdout"
    )
    assert git("show", "--name-only", "--format=", "HEAD", cwd=repo_worktree).split() == [
        "docs/b.md"
    ]
    assert recorder.texts("stderr") == []


def test_a_failed_commit_is_one_line_not_a_traceback(
    start: Start, recorder: Recorder, tmp_path: Path
) -> None:
    not_a_repo = tmp_path / "plain"
    not_a_repo.mkdir()
    turn = demo(start, not_a_repo, "write `docs/a.md`: x\n")
    assert turn.wait(30)
    assert turn.ending is not None and turn.ending.exit_code == 1
    assert any(t.startswith("demo: the commit failed: ") for t in recorder.texts("stdout"))
    assert recorder.texts("stderr") == []


def test_run_in_process_commits_and_reports_usage(
    repo_worktree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the same run() the subprocess calls, here where coverage and mutation tools see it
    brief = "write `docs/a.md`: héllo\nwrite `elsewhere.md`: no\nsleep 0\nwrite bad\n"
    assert run(brief, repo_worktree, ("docs",), "7") == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("demo: skipped line 4 'write bad' is not")
    assert out[1:4] == [
        "demo: write docs/a.md",
        "demo: skipped line 2: elsewhere.md is outside the boundary",
        "demo: sleeping 0 s",
    ]
    assert out[4].startswith("demo: committed ") and len(out[4].split()[-1]) == 40
    assert out[5] == f"HIVE-USAGE: provider=demo model=demo input={len(brief.encode())} output=7"
    assert (repo_worktree / "docs/a.md").read_text(encoding="utf-8") == "héllo\n"


def test_boundary_from_reads_one_path_per_line() -> None:
    assert boundary_from("docs/\n\n  src/app.py \n./lib") == ("docs", "src/app.py", "lib")


def test_sigterm_during_the_commit_is_a_stop_not_a_failed_commit(
    repo_worktree: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def sigterm_arrives(*args: object) -> None:
        demo_module._on_sigterm(signal.SIGTERM, None)

    monkeypatch.setattr(demo_module, "_commit", sigterm_arrives)
    assert run("write `docs/a.md`: x\n", repo_worktree, ("docs",), "7") == EXIT_STOPPED
    assert capsys.readouterr().out.splitlines()[-1] == (
        "demo: stopped by SIGTERM; not committed: docs/a.md"
    )


def test_demo_commits_in_a_worktree_the_hive_cut_itself(
    start: Start, recorder: Recorder, repo_worktree: Path, tmp_path: Path
) -> None:
    from dulwich.repo import Repo

    from hive.git.worktrees import cut_worktree

    with Repo(str(tmp_path / "repo")) as repo:
        cut = cut_worktree(repo, 8, "main", tmp_path / "work")
    turn = demo(start, cut.path, "write `docs/a.md`: cut by the hive\n", branch=cut.branch)
    assert turn.wait(30) and turn.outcome == FINISHED, recorder.lines
    assert git("log", "--format=%an|%s", cut.branch, cwd=cut.path).splitlines() == [
        "hive demo|demo: issue #7",
        "Ada|base",
    ]
    assert git("status", "--porcelain", cwd=cut.path) == ""
    git("fsck", "--strict", cwd=cut.path)


def test_after_a_send_back_lines_run_only_when_the_brief_carries_a_send_back(
    repo_worktree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from hive.agents.demo import SENDBACK_HEADING

    body = "write `docs/a.md`: first\nafter a send-back: append `docs/a.md`: fixed\n"
    assert run(body, repo_worktree, ("docs",), "7") == 0
    assert (repo_worktree / "docs/a.md").read_text(encoding="utf-8") == "first\n"
    again = f"{body}\n{SENDBACK_HEADING}\n- file `docs/a.md` contains `fixed`: no\n"
    assert run(again, repo_worktree, ("docs",), "7") == 0
    assert (repo_worktree / "docs/a.md").read_text(encoding="utf-8") == "first\nfixed\n"
    assert "demo: append docs/a.md" in capsys.readouterr().out
