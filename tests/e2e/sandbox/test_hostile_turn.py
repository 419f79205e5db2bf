"""A hostile `command:` agent in the sandbox tries every escape the threat model names
(docs/security.md) and each one fails, while its legitimate work (a file in its tree,
`git`, `python`, `node`, its own /tmp) succeeds. This test process plays the hive: its
environment holds the secret, its warden watches the turn, and a second sandboxed turn
beside it holds another key.

Run once per mechanism this machine has: bubblewrap and Landlock layered (what `auto`
takes here), and Landlock alone (what a Kubernetes pod's default seccomp profile leaves).
"""

from __future__ import annotations

import json
import os
import threading
import uuid
from pathlib import Path

import pytest

from hive.agents import Turn, TurnContext, start_turn
from hive.agents.launch import Launch
from hive.agents.sandbox import Kind, Sandbox
from hive.agents.sandbox_choice import available, bwrap_program
from hive.testing import git, make_repo
from supervisors.groups import group_members
from supervisors.warden import warden

pytestmark = [pytest.mark.e2e]

AGENT = Path(__file__).with_name("hostile_agent.py")
TURN_SECONDS = 60.0
LAYERED = [Kind.BWRAP_SECCOMP, Kind.LANDLOCK]
ESCAPES = (
    "read_hive_environ",
    "read_proc_1_environ",
    "list_hive_processes",
    "signal_hive",
    "signal_warden",
    "read_other_worktree",
    "read_other_brief",
    "read_workdir_records",
    "open_database_socket",
    "read_database_files",
    "read_hive_home",
    "read_hive_tmp",
    "follow_committed_symlink",
    "ptrace_hive",
    "read_other_turn_key",
    "abstract_socket",
)
LEGIT = ("write_boundary", "python", "node", "git", "tmp")


class Lines:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.lock = threading.Lock()

    def __call__(self, kind: str, text: str) -> None:
        with self.lock:
            self.lines.append(text)

    def text(self) -> str:
        with self.lock:
            return "\n".join(self.lines)


def sandbox_of(kind: Kind) -> Sandbox:
    found = available()
    if (kind is Kind.LANDLOCK and found is Kind.OFF) or (
        kind is not Kind.LANDLOCK
        and found
        in (
            Kind.OFF,
            Kind.LANDLOCK,
        )
    ):
        pytest.skip(f"{kind} does not work on this machine (found {found})")
    return Sandbox(kind=kind, bwrap=bwrap_program())


def context(worktree: Path, brief: str, sandbox: Sandbox, lines: Lines, key: str) -> TurnContext:
    return TurnContext(
        issue=1,
        title="hostile",
        body="",
        branch="queen-1",
        boundary=("src/work.txt",),
        brief=brief,
        worktree=worktree,
        key=key,
        turn_max_seconds=TURN_SECONDS,
        on_line=lines,
        launch=Launch(sandbox=sandbox),
    )


def start_other_turn(sandbox: Sandbox, workdir: Path, key: str) -> tuple[Turn, list[int]]:
    """A second sandboxed turn holding `key`, waiting; answers its processes' pids."""
    tree = workdir / "queen-3"
    make_repo(tree, {"a.txt": "a\n"})
    ready = tree / "ready"
    command = f"command:touch {ready}; exec sleep {TURN_SECONDS}"
    turn = start_turn(command, context(tree, "{}", sandbox, Lines(), key))
    deadline = threading.Event()
    for _ in range(600):
        if ready.exists():
            break
        deadline.wait(0.05)
    assert ready.exists(), "the other turn did not start"
    assert turn.pgid is not None
    return turn, group_members(turn.pgid)


@pytest.mark.parametrize("kind", LAYERED, ids=str)
def test_a_hostile_agent_reaches_nothing_of_the_hive_and_its_work_still_lands(
    kind: Kind, hive_secrets: dict[str, str]
) -> None:
    sandbox = sandbox_of(kind)
    workdir = Path(hive_secrets["workdir"])
    tree = make_repo(workdir / "queen-1", {"src/work.txt": "before\n", "README.md": "r\n"})
    other_key = f"other-turn-key-{uuid.uuid4().hex}"
    other, other_pids = start_other_turn(sandbox, workdir, other_key)
    try:
        targets = {
            **hive_secrets,
            "hive_pid": os.getpid(),
            "warden_pid": warden().pid,
            "other_turn_pids": other_pids,
            "other_key": other_key,
            "outside_file": str(workdir / "escaped.txt"),
            "home_file": str(Path(hive_secrets["home"]) / "escaped.txt"),
            "home_secret": str(Path(hive_secrets["home"]) / ".git-credentials"),
            "boundary_file": "src/work.txt",
        }
        assert targets["warden_pid"] is not None, "the test's turns run under a warden"
        brief = json.dumps({"targets": targets, "secret": hive_secrets["secret"]})
        lines = Lines()
        turn = start_turn(f"command:{AGENT}", context(tree, brief, sandbox, lines, "own-key"))
        assert turn.wait(TURN_SECONDS), lines.text()
    finally:
        other.stop("the test is over")
    out = lines.text()
    assert hive_secrets["secret"] not in out, out
    assert "ESCAPED" not in out, out
    for name in ESCAPES:
        assert f"ESCAPE {name}: refused" in out, f"{name} was not refused:\n{out}"
    # a write may land in bubblewrap's private /tmp; never on the machine
    for name in ("write_outside_tree", "write_hive_home"):
        assert f"ESCAPE {name}: " in out, out
    for name in LEGIT:
        assert f"LEGIT {name}: ok" in out, f"{name} failed:\n{out}"
    assert not (workdir / "escaped.txt").exists()
    assert not (Path(hive_secrets["home"]) / "escaped.txt").exists()
    assert (tree / "src" / "work.txt").read_text() == "work done inside the boundary\n"
    assert "src/work.txt" in git("status", "--short", cwd=tree)
