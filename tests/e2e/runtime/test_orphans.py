"""A turn never outlives its runner: a runner killed with SIGKILL mid-turn leaves no
process of its agent's group behind (its warden kills them within 2 s), so the next
attempt of the issue never overlaps it; and a runner whose warden died too kills, when it
starts again on the same workdir, the groups its earlier incarnation left."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from hive.swarm import pid_alive

from .harness import World

pytestmark = [pytest.mark.e2e, pytest.mark.live]

START_SECONDS = 60.0
EXIT_SECONDS = 30.0
REAPED_SECONDS = 90.0
# the wait for a dead runner's agents to go: an event's deadline, not the issue's 2 s
# bound (`hive bench recovery` measures that; a loaded machine schedules the warden late)
DIES_WITHIN_SECONDS = 60.0
SILENT_MINUTES = "0.05"  # 3 s without a heartbeat and the runner counts as gone
WARDEN_MAIN = "warden_main.py"


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            raw = (entry / "stat").read_text()
        except OSError:
            continue
        if raw[raw.rfind(")") + 2 :].split()[1] == str(pid):
            found.append(int(entry.name))
    return found


def _warden_of(pid: int) -> int | None:
    for child in _children(pid):
        try:
            cmdline = Path(f"/proc/{child}/cmdline").read_bytes()
        except OSError:
            continue
        if WARDEN_MAIN.encode() in cmdline:
            return child
    return None


def _brief_of(pid: int) -> Path:
    """The directory of the brief the agent process `pid` was given (its environment)."""
    environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    found = [v for v in environ if v.startswith(b"HIVE_BRIEF_FILE=")]
    assert found, "the agent was given a brief file"
    return Path(found[0].split(b"=", 1)[1].decode()).parent


def _stubborn_turn(world: World, name: str) -> list[int]:
    """Issue 1's turn on runner `name`, ignoring SIGTERM, with two children: its pids."""
    world.add_issue(1)
    world.hold(1)
    world.mode(1, "stubborn")
    world.wait(lambda: (world.ctl / "1.stubborn").exists(), START_SECONDS, f"the turn on {name}")
    pids = world.pids(1)
    assert len(pids) == 3 and all(pid_alive(p) for p in pids)
    return pids


def test_a_runner_killed_by_sigkill_mid_turn_leaves_no_agent_process_and_no_turn_overlaps(
    world: World,
) -> None:
    clocks = {"HIVE_RUNNER_SILENT_MINUTES": SILENT_MINUTES}
    world.queen(**clocks)
    doomed = world.runner("runner-a", **clocks)
    pids = _stubborn_turn(world, "runner-a")

    doomed.send(signal.SIGKILL)
    turns_seen: list[int] = []

    def gone() -> bool:
        turns_seen.append(len(world.turns(1)))
        return not any(pid_alive(p) for p in pids)

    world.wait(gone, DIES_WITHIN_SECONDS, "the dead runner's agent processes go")
    assert max(turns_seen) == 1, "a second turn of the issue started while the first still ran"

    # the next attempt, on another runner once the reaper freed the order, runs alone
    world.mode(1, "commit")
    world.runner("runner-b", **clocks)
    world.wait(lambda: world.claimed(1, "runner-b"), REAPED_SECONDS, "runner-b claims issue 1")
    world.release(1)
    world.wait(lambda: world.ended(1), START_SECONDS, "runner-b finishes issue 1")
    done = world.ended(1)
    assert done is not None and done.outcome == "finished" and done.claimed_by == "runner-b"
    assert len(world.turns(1)) == 2


def test_a_runner_started_again_kills_what_its_earlier_incarnation_and_warden_left(
    world: World,
) -> None:
    world.queen()
    doomed = world.runner("runner-a")
    pids = _stubborn_turn(world, "runner-a")
    leader = os.getpgid(pids[0])  # the group's leader: `sh -c` may have forked the script
    warden = _warden_of(doomed.pid)
    assert warden is not None, "the runner has a warden"
    # frozen first: a runner that finds its warden gone starts another at its next
    # heartbeat, which would kill the groups at the runner's death, before any restart
    doomed.send(signal.SIGSTOP)
    os.kill(warden, signal.SIGKILL)
    world.wait(lambda: not pid_alive(warden), EXIT_SECONDS, "the warden dies")
    doomed.send(signal.SIGKILL)
    # the leader's parent-death signal still reaches it; its children are out of reach
    world.wait(lambda: not pid_alive(leader), DIES_WITHIN_SECONDS, "the turn's leader dies")
    children = [p for p in pids if pid_alive(p)]
    assert children, "the children outlived the runner (nothing left for the restart)"
    brief = _brief_of(children[0])
    assert brief.is_dir(), "nobody was left to remove the turn's brief"

    world.runner("runner-a")  # the same workdir: an earlier incarnation's records
    world.wait(
        lambda: not any(pid_alive(p) for p in children),
        START_SECONDS,
        "the restarted runner kills the groups its earlier incarnation left",
    )
    # the line comes after the kill (the sweep kills, then says what it killed)
    said = "killed 1 process groups an earlier process left running"
    world.wait(lambda: said in world.serves[-1].log(), START_SECONDS, "the restart's own line")
    assert not brief.exists(), "the sweep removes the earlier incarnation's brief too"


def test_a_runner_stopped_past_its_fence_loses_its_turn_before_the_next_attempt_starts(
    world: World,
) -> None:
    """A runner frozen by SIGSTOP cannot stop its own turn; its warden (a process of its
    own) kills the turn once the claim went unrenewed for the fence (rules/fence.py),
    before the reaper hands the order to another runner: two turns never overlap."""
    clocks = {"HIVE_RUNNER_SILENT_MINUTES": "0.1"}  # 6 s; the fence falls at 4.8 s
    world.queen(**clocks)
    frozen = world.runner("runner-a", **clocks)
    pids = _stubborn_turn(world, "runner-a")
    world.runner("runner-b", **clocks)  # ready to take the order once it is reaped

    frozen.send(signal.SIGSTOP)
    try:
        turns_seen: list[int] = []

        def gone() -> bool:
            turns_seen.append(len(world.turns(1)))
            return not any(pid_alive(p) for p in pids)

        world.wait(gone, DIES_WITHIN_SECONDS, "the frozen runner's agent processes go")
        assert max(turns_seen) == 1, "a second turn started while the frozen one still ran"
        assert pid_alive(frozen.pid), "the runner itself lives on (only frozen)"
        # the next attempt runs on runner-b, alone
        world.mode(1, "commit")
        world.wait(lambda: world.claimed(1, "runner-b"), REAPED_SECONDS, "runner-b claims 1")
    finally:
        frozen.send(signal.SIGCONT)
