"""Crashes: a runner killed with SIGKILL mid-turn, and a Queen restarted with bees out."""

from __future__ import annotations

import signal
from typing import Any

import pytest

from hive.rules.states import Outcome
from hive.store import endings, orders
from hive.swarm import pid_alive

from .harness import World

pytestmark = [pytest.mark.e2e, pytest.mark.live]

START_SECONDS = 60.0
EXIT_SECONDS = 30.0
SILENT_MINUTES = "0.05"  # 3 s without a heartbeat and the runner counts as gone
# The stall reaper's own period is its business; this is only how long the test waits.
REAPED_SECONDS = 90.0


def outcomes(world: World, issue: int) -> list[Any]:
    """Every attempt's outcome, oldest first (archived attempts, then the current one)."""
    current = world.order(issue)
    return [h["outcome"] for h in world.history(issue)] + [current.outcome if current else None]


def test_a_runner_killed_mid_turn_loses_its_order_to_another_runner_and_its_turn_is_fenced_out(
    world: World,
) -> None:
    world.add_issue(1)
    world.hold(1)
    clocks = {"HIVE_RUNNER_SILENT_MINUTES": SILENT_MINUTES}
    world.queen(**clocks)
    doomed = world.runner("runner-a", **clocks)
    world.wait(lambda: world.turns(1), START_SECONDS, "issue 1's turn starts on runner-a")
    first = world.claimed(1, "runner-a")
    assert first is not None

    doomed.send(signal.SIGKILL)
    assert world.exit_code(doomed, EXIT_SECONDS) == -signal.SIGKILL
    # the bee runs in its own session, out of the SIGKILL's reach, but never outlives its
    # runner: the runner's warden kills it (tests/e2e/runtime/test_orphans.py); the fence
    # is what keeps a turn that did live on from writing
    orphan = world.turns(1)[0]
    world.wait(lambda: not pid_alive(orphan.pid), EXIT_SECONDS, "the killed runner's turn dies")

    world.runner("runner-b", **clocks)
    world.wait(
        lambda: "reaped: runner silent" in outcomes(world, 1),
        REAPED_SECONDS,
        "the stall reaper frees runner-a's order",
    )
    world.wait(lambda: world.claimed(1, "runner-b"), START_SECONDS, "runner-b claims issue 1")
    second = world.claimed(1, "runner-b")
    assert second is not None and second.attempt == 2
    assert second.conversation_id != first.conversation_id

    # the killed runner's turn can never write to the order again
    old = orders.Fence(1, first.conversation_id, "runner-a")
    assert not orders.heartbeat(world.db, old)
    assert not orders.mark_started(world.db, old)
    assert not endings.end(world.db, endings.OrderEnding(old, Outcome.FINISHED))
    # not even under the name of the runner holding it now (a restart under one name)
    renamed = orders.Fence(1, first.conversation_id, "runner-b")
    assert not orders.heartbeat(world.db, renamed)
    assert not endings.end(world.db, endings.OrderEnding(renamed, Outcome.FINISHED))
    still = world.claimed(1, "runner-b")
    assert still is not None and still.conversation_id == second.conversation_id

    world.release(1)
    world.wait(lambda: world.ended(1), START_SECONDS, "runner-b finishes issue 1")
    done = world.ended(1)
    assert done is not None and done.outcome == "finished" and done.claimed_by == "runner-b"
    assert outcomes(world, 1) == ["reaped: runner silent", "finished"]
    turns = world.turns(1)
    assert len(turns) == 2, "one turn per attempt, no duplicate"
    assert turns[1].cwd.startswith(str(world.root / "runner-b") + "/")
    stored = world.bundle(1)
    assert stored is not None and stored.runner == "runner-b"
    text = world.fetch(1).file("files/f1.txt")
    assert f"issue 1 turn {turns[1].pid}" in text
    # nothing of the killed runner's bee reached the store (it was never salvaged)
    assert f"issue 1 turn {orphan.pid}" not in text


def test_a_queen_restart_reaps_only_her_own_bees_and_runner_orders_survive(world: World) -> None:
    for n in (1, 2, 3, 4):
        world.hold(n)
        world.mode(n, "salvage")
    # runner bees: a Queen that queues, a runner that claims issues 3 and 4
    queuing = world.queen("queen-queues")
    world.runner("runner-a", HIVE_RUNNER_SLOTS="2")
    world.add_issue(3)
    world.add_issue(4)
    world.wait(lambda: world.turns(3) and world.turns(4), START_SECONDS, "runner bees start")
    queuing.send(signal.SIGTERM)
    assert world.exit_code(queuing, EXIT_SECONDS) == 0, world.report()

    # local bees: a Queen that runs issues 1 and 2 in her own process
    local = world.start("queen", "queen")
    world.add_issue(1)
    world.add_issue(2)
    # a local bee's turn runs before its row is inserted (the insert is its ledger): wait
    # for both, or a loaded machine finds a turn whose order is not written yet
    world.wait(
        lambda: all(world.turns(n) and world.order(n) for n in (1, 2)),
        START_SECONDS,
        "local bees start",
    )
    before = {n: world.order(n) for n in (1, 2, 3, 4)}
    assert all(o is not None and o.finished_at is None for o in before.values()), world.report()
    assert before[1].queued_at is None and before[2].queued_at is None  # type: ignore[union-attr]
    assert before[3].claimed_by == "runner-a" and before[4].claimed_by == "runner-a"  # type: ignore[union-attr]

    local.send(signal.SIGKILL)  # a crash: her bees' rows stay unfinished
    world.exit_code(local, EXIT_SECONDS)
    world.start("queen", "queen")  # the same Queen, same checkout, booting again

    world.wait(
        lambda: all("reaped at boot" in outcomes(world, n) for n in (1, 2)),
        START_SECONDS,
        "the boot reaper ends the Queen's own orders",
    )
    for n in (1, 2):
        reaped = world.attempt(n, 1)
        assert reaped is not None and reaped["outcome"] == "reaped at boot"
        assert reaped["queued_at"] is None
        # salvaged first: the bee's uncommitted line is a commit on the Queen's branch
        from_queen = world.fetch(n, checkout_of="queen")
        assert f"issue {n} turn {world.turns(n)[0].pid}" in from_queen.file(f"files/f{n}.txt")
    for n in (3, 4):
        survivor = world.claimed(n, "runner-a")
        assert survivor is not None, f"#{n}: a runner's order was reaped by the Queen's boot"
        assert survivor.conversation_id == before[n].conversation_id  # type: ignore[union-attr]
        assert world.history(n) == []

    world.release(3)
    world.release(4)
    world.wait(lambda: world.ended(3) and world.ended(4), START_SECONDS, "runner bees finish")
    for n in (3, 4):
        done = world.ended(n)
        assert done is not None and done.outcome == "finished" and done.attempt == 1
        assert f"issue {n} turn" in world.fetch(n).file(f"files/f{n}.txt")
