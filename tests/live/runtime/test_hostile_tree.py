"""What an agent leaves in its tree, against the real store, real processes and the git
binary: commits of its own outside the boundary are cut back before the bundle, and a
FIFO or socket beside its work is skipped, never opened, by the ending and by the boot
reaper, with a sentence in the transcript."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from hive.actors.bee import ending
from hive.actors.bee.ending import Leftover
from hive.actors.reaper.reaper import Reaper
from hive.git.repo import resolve
from hive.git.salvage import Salvage
from hive.git.worktrees import cut_worktree
from hive.rules.states import Outcome
from hive.runtime import reaper_ports
from hive.store import bundles, orders, transcript
from hive.store.endings import OrderEnding
from hive.store.orders import Fence, NewOrder
from hive.testing import git, wait_for_ending
from tests.live.runtime.conftest import add_issue, eventually
from tests.live.runtime.test_bee import run_one
from tests.live.runtime.test_reaper import local_order

COMMIT = "git -c user.name=bee -c user.email=bee@hive.invalid -c commit.gpgsign=false"

# an agent that does what the boundary forbids and commits it itself
COMMITS_OUTSIDE = f"""#!/bin/sh
echo "the agent's change" > src/app.py
echo "rewritten by the agent" > README.md
echo new > outside.txt
ln -s /etc/passwd src/passwd
chmod +x docs/notes.md
{COMMIT} add -A
{COMMIT} commit -q -m "agent: everything at once"
"""

# an agent that leaves a FIFO and a listening socket beside its work
LEAVES_SPECIAL_FILES = """#!/bin/sh
echo "the agent's change" > src/app.py
mkfifo src/pipe
python3 -c 'import socket; socket.socket(socket.AF_UNIX).bind("src/agent.sock")'
"""


def agent(tmp_path: Path, script: str) -> str:
    path = tmp_path / "agent.sh"
    path.write_text(script)
    return f"command:sh {path}"


def hive_lines(rt, conversation_id) -> list[str]:
    return [line.text for line in transcript.read(rt.db, conversation_id) if line.kind == "hive"]


def fetched(rt, issue: int, hive_repo: Path, tmp_path: Path) -> Path:
    """A clone of the repository with the stored bundle of `issue` fetched as `got`,
    checked by `git fsck --strict`."""
    stored = bundles.get(rt.db, issue)
    assert stored is not None
    path = tmp_path / f"queen-{issue}.bundle"
    path.write_bytes(stored.data)
    clone = tmp_path / "judge"
    git("clone", "-q", str(hive_repo), str(clone), cwd=tmp_path)
    git("fetch", "-q", str(path), f"queen-{issue}:got", cwd=clone)
    git("fsck", "--strict", cwd=clone)
    return clone


def test_an_agent_that_commits_outside_its_boundary_is_cut_back_before_its_bundle(
    make_runtime, hive_repo, tmp_path
):
    rt = make_runtime(AGENT=agent(tmp_path, COMMITS_OUTSIDE))
    run_one(rt, 1)
    order = wait_for_ending(rt.db, 1)

    assert order.outcome == "finished"
    clone = fetched(rt, 1, hive_repo, tmp_path)
    assert git("diff", "--name-status", "main..got", cwd=clone).splitlines() == ["M\tsrc/app.py"]
    assert git("show", "got:src/app.py", cwd=clone) == "the agent's change"
    said = [line for line in hive_lines(rt, order.conversation_id) if "cut back" in line]
    assert len(said) == 1
    for path in ("README.md", "outside.txt", "docs/notes.md", "src/passwd"):
        assert f"{path} is outside the boundary" in said[0]


def test_a_fifo_and_a_socket_beside_the_work_are_skipped_and_the_transcript_says_so(
    make_runtime, hive_repo, tmp_path
):
    rt = make_runtime(AGENT=agent(tmp_path, LEAVES_SPECIAL_FILES))
    run_one(rt, 2)
    order = wait_for_ending(rt.db, 2)

    assert order.outcome == "finished"
    assert order.salvaged_files == ["src/app.py"]
    clone = fetched(rt, 2, hive_repo, tmp_path)
    assert git("show", "got:src/app.py", cwd=clone) == "the agent's change"
    assert (
        "skipped, never opened (a FIFO, socket or device node): src/agent.sock, src/pipe"
        in hive_lines(rt, order.conversation_id)
    )


def test_the_boot_reaper_skips_a_fifo_and_salvages_the_work_beside_it(make_runtime):
    rt = make_runtime()
    local_order(rt, 3, leftover="left by a bee the restart killed\n")
    fifo = rt.checkout.workdir / "queen-3" / "src" / "pipe"
    os.mkfifo(fifo)
    done: list[object] = []
    booted = threading.Thread(
        target=lambda: done.append(Reaper(reaper_ports(rt), rt.reaper).boot())
    )
    booted.start()
    try:
        eventually(lambda: done, timeout_seconds=20)
    finally:  # a reaper blocked in open() is let go by a writer
        if not done:
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        booted.join(20)
    reaped = orders.get(rt.db, 3)
    assert reaped is not None and reaped.salvaged_files == ["src/app.py"]
    assert "skipped, never opened (a FIFO, socket or device node): src/pipe" in hive_lines(
        rt, reaped.conversation_id
    )


def test_a_branch_that_cannot_be_judged_is_not_bundled(make_runtime, monkeypatch):
    def unreadable(*args, **kwargs):
        raise KeyError("a tree of the branch is missing")

    monkeypatch.setattr(ending, "cut_back", unreadable)
    rt = make_runtime()
    add_issue(rt.db, 4)
    new = NewOrder(4, "queen-4", "main", owned_paths=("src/app.py",))
    assert orders.insert(rt.db, new, queued=False) is orders.Insertion.WRITTEN
    cut = cut_worktree(rt.checkout.repo, 4, "main", rt.checkout.workdir)
    (cut.path / "src/app.py").write_text("print('changed')\n")
    left = Leftover(Path(cut.path), ("src/app.py",), "main", resolve(rt.checkout.repo, "main"))
    said: list[str] = []
    closing = ending.close_order(
        rt.db,
        rt.checkout,
        rt.metrics,
        OrderEnding(Fence(4, new.conversation_id, None), Outcome.FINISHED),
        left,
        10**8,
        note=said.append,
    )
    assert closing.landed and closing.salvaged_files == ("src/app.py",)
    assert closing.bundle_bytes == 0 and bundles.get(rt.db, 4) is None
    assert said == [
        "the branch could not be judged against its boundary ('a tree of the branch is "
        "missing'): not bundled"
    ]


def test_a_hand_back_beside_a_fifo_ends_the_order_within_its_deadline(make_runtime):
    rt = make_runtime(AGENT="command:echo half done >> src/app.py; mkfifo src/pipe; exec sleep 60")
    bee = run_one(rt, 5)
    fifo = rt.settings.workdir / "queen-5" / "src" / "pipe"
    eventually(lambda: fifo.exists())
    try:
        assert bee.hand_back(15), "the hand-back did not end the order in time"
    finally:  # an ending blocked in open() is let go by a writer
        if not bee.ended:
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
            bee.wait(20)
    order = orders.get(rt.db, 5)
    assert order is not None and order.outcome == "handed back"
    assert order.salvaged_files == ["src/app.py"]
    assert "skipped, never opened (a FIFO, socket or device node): src/pipe" in hive_lines(
        rt, order.conversation_id
    )


def test_the_endings_sentences_escape_what_a_file_name_holds():
    kept = Salvage(None, (), ("notes\nforged line",), (), ("pipe\x1b]52;c;x\x07",))
    assert ending.salvage_notes(kept) == [
        "skipped, never opened (a FIFO, socket or device node): pipe\\x1b]52;c;x\\x07",
        "left outside the boundary, not committed: notes\\nforged line",
    ]
