"""The connection budget per process (hive.rules.connections), counted by PostgreSQL
itself: pg_stat_activity rows under each process's application_name, for an idle
runner, a runner with two bees, and a Queen whose loops share one LISTEN."""

from __future__ import annotations

import pytest

from hive.rules.connections import BUSY_CONNECTIONS, IDLE_CONNECTIONS
from tests import budget

from .harness import World

pytestmark = [pytest.mark.e2e, pytest.mark.live]

START_SECONDS = 60.0
TURN_SECONDS = 60.0
# samples taken while the claimer polls every 0.2 s (FAST_CLOCKS) and the bees heartbeat
SAMPLES = 40


def held(world: World, name: str) -> tuple[int, int]:
    """(connections, LISTEN connections) of the process that names itself `name`."""
    return budget.held(world.db, f"hive-{name}")


def most_held(world: World, name: str) -> int:
    return budget.most_held(world.db, f"hive-{name}", SAMPLES)


def test_a_runner_holds_two_connections_idle_and_three_with_bees_listen_included(
    world: World,
) -> None:
    world.queen()
    world.runner("runner-a", HIVE_RUNNER_SLOTS="2")
    world.wait(lambda: world.runner_row("runner-a"), START_SECONDS, "runner-a registers")
    world.wait(lambda: held(world, "runner-a")[1] == 1, START_SECONDS, "runner-a LISTENs")
    world.wait(lambda: held(world, "queen")[1] == 1, START_SECONDS, "the Queen LISTENs")

    assert most_held(world, "runner-a") <= IDLE_CONNECTIONS, world.report()
    # her round and her reviewer both listen, on one shared connection
    assert held(world, "queen")[1] == 1
    assert most_held(world, "queen") <= IDLE_CONNECTIONS, world.report()

    for n in (1, 2):
        world.hold(n)
        world.add_issue(n)
    world.wait(lambda: len(world.turns(1)) and len(world.turns(2)), TURN_SECONDS, "two turns")
    busy = most_held(world, "runner-a")
    assert busy <= BUSY_CONNECTIONS, world.report()

    world.release(1)
    world.release(2)
    world.wait(lambda: world.ended(1) and world.ended(2), TURN_SECONDS, "both orders end")
    # the bees' extra connection is closed once none runs
    world.wait(
        lambda: held(world, "runner-a")[0] <= IDLE_CONNECTIONS,
        START_SECONDS,
        "runner-a back within its idle budget",
    )
    assert held(world, "runner-a")[1] == 1
