"""The runner's claimer shares its process's LISTEN as `one_of` (hive/store/listen.py):
a hint wakes one claimer with a free slot, not every claimer of the process, and none
that is full; its bounded poll is jittered (hive/rules/jitter.py)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from hive import configs
from hive.actors.runner import RunnerActor
from hive.rules.jitter import POLL_JITTER
from hive.runtime import claimer_ports
from hive.store.listen import Listener, Reason, is_ending
from hive.testing import wait_for_ending
from tests.live.runtime import agents
from tests.live.runtime.conftest import AGENT, eventually, queue

pytestmark = pytest.mark.live


def hint(rt, payload: str) -> None:
    with rt.db.connection() as conn:
        conn.execute("SELECT pg_notify('hive_orders', %s)", (payload,))


def actor_of(rt, slots: int = 1) -> RunnerActor:
    config = replace(configs.claimer_config(rt.settings), slots=slots, bee_memory_mb=1024)
    return RunnerActor(claimer_ports(rt), config)


def test_a_hint_wakes_the_claimer_with_a_free_slot_and_not_the_full_one(make_runtime):
    busy_rt = make_runtime(AGENT=AGENT + "until_released")
    free_rt = make_runtime()
    busy, free = actor_of(busy_rt), actor_of(free_rt)
    queue(busy_rt, 1)
    assert busy.work.run_once().started == (1,)  # its one slot is taken
    assert not busy.work.hungry() and free.work.hungry()
    busy_hears, free_hears = busy._listen(), free._listen()
    assert busy_hears is not None and free_hears is not None
    assert busy_hears.one_of and free_hears.one_of
    with Listener(busy_rt.url, is_ending) as everything:  # not one_of: hears every hint
        for payload in ("2", "3"):
            hint(busy_rt, payload)
        assert [everything.wait(10.0).payloads for _ in range(2)] == [("2",), ("3",)]
        # both hints were handed out by then: each to the claimer with room
        assert [free_hears.wait(0).reason, free_hears.wait(0).reason] == [Reason.NOTIFIED] * 2
        assert busy_hears.wait(0).reason == Reason.TIMEOUT
        agents.RELEASE.set()
        assert wait_for_ending(busy_rt.db, 1).outcome == "finished"
        eventually(busy.work.hungry)
        hint(busy_rt, "4")
        hint(busy_rt, "5")
        assert [everything.wait(10.0).payloads for _ in range(2)] == [("4",), ("5",)]
        # two hungry claimers now: one hint each, in turn
        assert (
            busy_hears.wait(0).reason == Reason.NOTIFIED
            and free_hears.wait(0).reason == Reason.NOTIFIED
        )
    busy._drop_listener()
    free._drop_listener()


def test_the_claimers_poll_is_jittered_a_tenth_either_way(make_runtime):
    actor = actor_of(make_runtime())
    poll = actor.interval_seconds
    assert actor.jitter == POLL_JITTER
    actor.draw = lambda: 0.0
    assert actor.next_wait() == pytest.approx(poll * 0.9)
    actor.draw = lambda: 1.0
    assert actor.next_wait() == pytest.approx(poll * 1.1)
