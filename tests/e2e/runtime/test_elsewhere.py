"""A Queen that only queues orders and two runner processes share six issues."""

from __future__ import annotations

import pytest

from .harness import World

pytestmark = [pytest.mark.e2e, pytest.mark.live]

ISSUES = range(1, 7)
ALL_END_SECONDS = 90.0


def test_two_runners_claim_every_order_once_and_every_bundle_fetches_with_git(
    world: World,
) -> None:
    for n in ISSUES:
        world.add_issue(n)
        # half commit with git, half leave their change for the runner's salvage
        world.mode(n, "commit" if n % 2 else "salvage")
    world.queen()
    world.runner("runner-a")
    world.runner("runner-b")

    world.wait(lambda: all(world.ended(n) for n in ISSUES), ALL_END_SECONDS, "all six orders end")

    workdirs = {name: str(world.root / name) for name in ("runner-a", "runner-b")}
    for n in ISSUES:
        order = world.ended(n)
        assert order is not None
        assert order.outcome == "finished", world.report()
        assert order.queued_at is not None, "elsewhere mode: the Queen queued it"
        assert order.attempt == 1 and world.history(n) == [], f"#{n} was dispatched twice"
        turns = world.turns(n)
        assert len(turns) == 1, f"#{n} ran {len(turns)} turns: {turns}"
        assert order.claimed_by in workdirs, order.claimed_by
        # the one turn ran in the worktree of the runner the row names
        assert turns[0].cwd.startswith(workdirs[order.claimed_by] + "/"), (turns, order)
        stored = world.bundle(n)
        assert stored is not None, f"#{n} ended without its bundle"
        assert stored.runner == order.claimed_by

        fetched = world.fetch(n)
        assert fetched.head == stored.head_sha
        assert f"issue {n} turn {turns[0].pid}" in fetched.file(f"files/f{n}.txt")
        assert fetched.commits_beyond_base() == 1

    # the Queen saw every order end: nothing was queued again meanwhile
    assert all(world.order(n).attempt == 1 for n in ISSUES)  # type: ignore[union-attr]
