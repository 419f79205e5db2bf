"""SIGTERM to a real `hive serve`: the drain card (seed 002) as the process lives it."""

from __future__ import annotations

import signal
import time
from datetime import timedelta

import pytest

from hive.rules.drain import HAND_BACK_SECONDS
from hive.store import issues, reports
from hive.swarm import pid_alive, processes_under

from .harness import World

pytestmark = [pytest.mark.e2e, pytest.mark.live]

START_SECONDS = 60.0  # from `hive serve` to a turn running, on a loaded two-core machine
EXIT_SECONDS = 30.0
EVENT_SECONDS = 60.0  # a deadline for an event: it returns as soon as the event holds
POLL_SLACK_SECONDS = 5.0  # how late this test may notice something that happened in time
RUNNER_SECONDS = 0.2  # FAST_CLOCKS' HIVE_RUNNER_SECONDS
STOP_GRACE_SECONDS = 3.0  # RULES 2: abort, 3 s grace, then SIGKILL to the group
LANE_FREE_SECONDS = 5.0


def test_sigterm_mid_turn_holds_the_turn_to_its_end_stores_its_bundle_and_exits_zero(
    world: World,
) -> None:
    world.add_issue(1)
    world.hold(1)
    world.queen()
    runner = world.runner("runner-a", HIVE_RUNNER_SLOTS="2", HIVE_RUNNER_DRAIN_SECONDS="120")
    world.wait(lambda: world.turns(1), START_SECONDS, "issue 1's turn starts")
    assert world.claimed(1, "runner-a")

    signalled_at = world.now()
    runner.send(signal.SIGTERM)
    world.wait(
        lambda: (r := world.runner_row("runner-a")) is not None and r.draining,
        EVENT_SECONDS,
        "runner-a marks itself draining",
    )
    # held: the heartbeat goes on while the drain waits for the turn
    world.wait(
        lambda: world.renewed_after(1, "runner-a", signalled_at),
        EVENT_SECONDS,
        "runner-a renews its claim during the drain",
    )
    # and it takes nothing new, though a slot is free: an order queued now stays queued
    world.add_issue(2)
    queued = world.wait(lambda: world.queued(2), 10, "the Queen queues issue 2")
    assert queued.queued_at is not None
    polls_later = queued.queued_at + timedelta(seconds=3 * RUNNER_SECONDS)
    world.wait(
        lambda: world.renewed_after(1, "runner-a", polls_later),
        EVENT_SECONDS,
        "runner-a lives three of its periods past issue 2's queueing",
    )
    assert runner.exit_code() is None, "the drain did not wait for the turn"
    assert world.order(1).finished_at is None  # type: ignore[union-attr]

    world.release(1)
    assert world.exit_code(runner, EXIT_SECONDS) == 0, world.report()

    order = world.ended(1)
    assert order is not None and order.outcome == "finished", world.report()
    stored = world.bundle(1)
    assert stored is not None
    fetched = world.fetch(1)
    assert f"issue 1 turn {world.turns(1)[0].pid}" in fetched.file("files/f1.txt")
    second = world.order(2)
    assert second is not None
    assert second.claimed_by is None and second.finished_at is None, "claimed during the drain"
    left = [o for o in (world.order(1), second) if o and o.claimed_by and not o.finished_at]
    assert left == [], "an order is left claimed by a runner that has gone"


# The cap is drain_cap_seconds(HIVE_RUNNER_DRAIN_SECONDS, HIVE_PLATFORM_DRAIN_SECONDS): set
# by the runner's own drain, or moved earlier by a platform drain too short for it
# (26 s leaves 1 s once the hand-back's 20 s and the exit's 5 s are kept).
CAPS = {
    "runner drain 1 s": {"HIVE_RUNNER_DRAIN_SECONDS": "1"},
    "platform drain 26 s": {"HIVE_PLATFORM_DRAIN_SECONDS": "26"},
}


@pytest.mark.parametrize("cap", list(CAPS))
def test_sigterm_with_the_cap_shorter_than_the_turn_hands_it_back_and_the_next_attempt_continues(
    world: World, cap: str
) -> None:
    cap_seconds = 1
    world.add_issue(1)
    world.hold(1)
    world.queen()
    runner = world.runner("runner-a", **CAPS[cap])
    world.wait(lambda: world.turns(1), START_SECONDS, "issue 1's turn starts")
    first_turn = world.turns(1)[0]

    sent = runner.send(signal.SIGTERM)
    bound = cap_seconds + HAND_BACK_SECONDS
    handed = world.wait(lambda: world.attempt(1, 1), bound + POLL_SLACK_SECONDS, "hand-back")
    landed_seconds = time.monotonic() - sent
    assert landed_seconds <= bound, f"the hand-back took {landed_seconds:.1f} s"
    assert handed["outcome"] == "handed back", world.report()
    assert world.exit_code(runner, EXIT_SECONDS) == 0, world.report()

    # the salvaged work is in the stored bundle, one commit on base
    fetched = world.fetch(1)
    assert f"issue 1 turn {first_turn.pid}" in fetched.file("files/f1.txt")
    assert fetched.commits_beyond_base() == 1
    salvage_commit = fetched.head

    # the issue is free at once; the next attempt, on another runner, continues the branch
    world.release(1)
    world.runner("runner-b")
    world.wait(
        lambda: (o := world.ended(1)) is not None and o.attempt == 2,
        START_SECONDS,
        "the second attempt ends",
    )
    second = world.ended(1)
    assert second is not None and second.outcome == "finished", world.report()
    assert second.claimed_by == "runner-b"
    assert [h["outcome"] for h in world.history(1)] == ["handed back"]
    turns = world.turns(1)
    assert len(turns) == 2
    again = world.fetch(1)
    assert again.has_ancestor(salvage_commit), "attempt 2 did not continue the branch"
    text = again.file("files/f1.txt")
    assert f"issue 1 turn {turns[0].pid}" in text and f"issue 1 turn {turns[1].pid}" in text
    assert again.commits_beyond_base() == 2


@pytest.mark.parametrize("role", ["runner", "queen", "queen,runner"])
def test_sigterm_with_no_bees_exits_zero_having_waited_for_nothing(world: World, role: str) -> None:
    # how fast (issue 6: under 2 s) is `hive bench drain`'s to measure: a wall clock read
    # here measures the machine's load as well
    serve = world.start("idle", role)
    if "runner" in role:
        world.wait(lambda: world.runner_row("idle"), START_SECONDS, "the runner registers")
    if "queen" in role:
        world.wait(lambda: reports.latest(world.db, 1), START_SECONDS, "the Queen's first round")
    serve.send(signal.SIGTERM)
    assert world.exit_code(serve, EXIT_SECONDS) == 0, world.report()
    summary = next(line for line in serve.log().splitlines() if "drain: cap" in line)
    assert "held at start 0, ended on their own 0, handed back 0, stopped 0" in summary


@pytest.mark.parametrize("stopped_by", ["the drain's cap", "the turn's bound"])
def test_a_turn_that_ignores_sigterm_is_killed_with_its_children(
    world: World, stopped_by: str
) -> None:
    world.add_issue(1)
    world.mode(1, "stubborn")
    world.queen()
    extra = {"HIVE_RUNNER_DRAIN_SECONDS": "0"}
    if stopped_by == "the turn's bound":
        extra = {"HIVE_TURN_MAX_SECONDS": "1"}
        # no next attempt, so only this turn may run under runner-a: the issue is closed
        # before the runner can start the turn (closed once it runs, a loaded machine
        # could see the bound end it and the Queen queue attempt 2 first)
        world.wait(lambda: world.queued(1), START_SECONDS, "the Queen queues issue 1")
        issues.set_state(world.db, 1, "closed")
    runner = world.runner("runner-a", **extra)
    world.wait(lambda: (world.ctl / "1.stubborn").exists(), START_SECONDS, "the stubborn turn")
    pids = world.pids(1)
    assert len(pids) == 3 and all(pid_alive(p) for p in pids)

    if stopped_by == "the drain's cap":
        sent = runner.send(signal.SIGTERM)
        assert world.exit_code(runner, EXIT_SECONDS) == 0, world.report()
        # abort, the grace, SIGKILL to the group: the process waits for the grace (how
        # little more is `hive bench drain`'s to measure, not a loaded machine's clock)
        took = time.monotonic() - sent
        assert took >= STOP_GRACE_SECONDS, took
        handed = world.attempt(1, 1)
        assert handed is not None and handed["outcome"] == "handed back", world.report()
    else:
        world.wait(lambda: world.attempt(1, 1), START_SECONDS, "the turn's bound ends it")
        assert runner.exit_code() is None, "the runner itself must live on"

    assert [p for p in pids if pid_alive(p)] == [], "a process of the turn survived"
    bees = world.root / "runner-a"
    assert processes_under(bees) == [], "something still runs in the runner's worktrees"


def test_a_handed_back_order_records_what_was_salvaged(world: World) -> None:
    world.add_issue(1)
    world.hold(1)
    world.queen()
    runner = world.runner("runner-a", HIVE_RUNNER_DRAIN_SECONDS="0")
    world.wait(lambda: world.turns(1), START_SECONDS, "issue 1's turn starts")
    runner.send(signal.SIGTERM)
    assert world.exit_code(runner, EXIT_SECONDS) == 0, world.report()
    handed = world.attempt(1, 1)
    assert handed is not None and handed["outcome"] == "handed back"
    stored = world.bundle(1)
    assert stored is not None
    assert handed["salvaged_sha"] == stored.head_sha
    assert handed["salvaged_at"] is not None
    assert handed["salvaged_files"] == ["files/f1.txt"]
