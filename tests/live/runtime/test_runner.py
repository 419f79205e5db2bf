"""The claimer against the real store: it fills its free slots, refuses a key it lacks
(and a runner with that key then takes the order), holds back when the container guard
says so, registers itself and stops claiming once the drain began."""

from __future__ import annotations

import threading
from dataclasses import replace

import pykka
import pytest

from hive import configs
from hive.actors.bee.host import HostActor
from hive.actors.messages import CLAIMER, SlotFree
from hive.actors.runner import Claimer
from hive.runtime import claimer_ports
from hive.store import orders, runners
from hive.testing import wait_for_ending
from tests.live.runtime import agents
from tests.live.runtime.conftest import AGENT, Inbox, eventually, queue


def claimer_of(rt, slots: int = 1, free: int | None = None) -> Claimer:
    config = replace(configs.claimer_config(rt.settings), slots=slots, bee_memory_mb=1024)
    return Claimer(claimer_ports(rt), config, free_memory=lambda: free)


@pytest.mark.through_pgbouncer
def test_runner_claims_an_order_per_free_slot_and_leaves_the_rest_queued(make_runtime):
    rt = make_runtime(AGENT=AGENT + "until_released")
    for issue in (1, 2, 3):
        queue(rt, issue)
    result = claimer_of(rt, slots=2).run_once()
    assert result.started == (1, 2)
    claimed = {o.issue: o.claimed_by for o in orders.listing(rt.db)}
    assert claimed == {1: rt.settings.runner_name, 2: rt.settings.runner_name, 3: None}
    assert rt.metrics.claims._value.get() == 2
    assert claimer_of(rt, slots=2).run_once().started == ()  # both slots are taken
    agents.RELEASE.set()
    assert wait_for_ending(rt.db, 1).outcome == "finished"


@pytest.mark.through_pgbouncer
def test_runner_refuses_a_key_it_lacks_and_a_runner_with_that_key_takes_it(make_runtime):
    lacking = make_runtime()
    having = make_runtime(WORKER_KEY_2="second-key-0123456789")
    queue(having, 9, key_index=1)
    first = claimer_of(lacking).run_once()
    assert first.refused == (9,) and first.started == ()
    order = orders.get(lacking.db, 9)
    assert order is not None and order.claimed_by is None
    assert order.refused_by == [lacking.settings.runner_name]
    assert lacking.metrics.key_refusals._value.get() == 1
    assert claimer_of(lacking).run_once().refused == ()  # never reaches for it again
    assert claimer_of(having).run_once().started == (9,)
    assert wait_for_ending(having.db, 9).claimed_by == having.settings.runner_name


def test_runner_refuses_a_key_whose_fingerprint_differs(make_runtime):
    rt = make_runtime()
    queue(rt, 4, key_index=0, fingerprint="0" * 16)
    assert claimer_of(rt).run_once().refused == (4,)


def test_container_guard_claims_nothing_and_the_order_stays_queued(make_runtime):
    rt = make_runtime()
    queue(rt, 2)
    result = claimer_of(rt, free=0).run_once()
    assert result.started == () and "HIVE_BEE_MEMORY_MB=1024" in (result.held_back or "")
    order = orders.get(rt.db, 2)
    assert order is not None and order.claimed_by is None


def test_runner_registers_itself_and_reports_draining(make_runtime):
    rt = make_runtime()
    claimer = claimer_of(rt, slots=3)
    claimer.run_once()
    mine = [r for r in runners.listing(rt.db) if r.name == rt.settings.runner_name]
    assert mine and mine[0].slots == 3 and not mine[0].draining
    rt.work.begin_drain()
    queue(rt, 5)
    assert claimer.run_once().started == ()
    mine = [r for r in runners.listing(rt.db) if r.name == rt.settings.runner_name]
    assert mine[0].draining
    assert orders.get(rt.db, 5).claimed_by is None  # type: ignore[union-attr]


def test_the_runner_resets_the_turn_clock_when_the_turn_really_starts(make_runtime):
    rt = make_runtime(AGENT=AGENT + "until_released")
    queue(rt, 6)
    claimer_of(rt).run_once()

    def reset() -> bool:
        order = orders.get(rt.db, 6)
        assert order is not None and order.claimed_at is not None
        return order.dispatched_at is not None and order.dispatched_at > order.claimed_at

    eventually(reset)


def test_a_bee_that_ends_wakes_the_claimer_once_its_slot_is_free(make_runtime):
    # the ending's NOTIFY may reach the claimer while the bee still holds its slot: a
    # claimer woken then finds no slot free, and without a second wake the next queued
    # order waits out a whole HIVE_RUNNER_SECONDS poll
    rt = make_runtime()
    claimer = Inbox(look=rt.host.running)
    rt.names.register(CLAIMER, claimer)
    queue(rt, 8)
    assert claimer_of(rt).run_once().started == (8,)
    assert wait_for_ending(rt.db, 8).outcome == "finished"
    assert claimer.heard.wait(5)
    assert claimer.told == [(SlotFree(8), 0)]


def test_a_bee_starts_and_leaves_on_the_host_actors_thread(make_runtime):
    # the host actor owns the seats: it admits the bee, takes it off the registry, fits the
    # store pool and wakes the claimer, each on its own thread (the bee's thread only
    # tells it that it ended)
    rt = make_runtime()
    fitted: list[tuple[int, str]] = []
    rt.host.watch(lambda running: fitted.append((running, threading.current_thread().name)))
    claimer = Inbox(look=lambda: threading.current_thread().name)
    rt.names.register(CLAIMER, claimer)
    queue(rt, 7)
    assert claimer_of(rt).run_once().started == (7,)
    assert claimer.heard.wait(10)
    [(told, told_on)] = claimer.told
    assert told == SlotFree(7) and told_on.startswith("HostActor")
    assert [running for running, _ in fitted] == [1, 0]
    assert all(thread.startswith("HostActor") for _, thread in fitted)


def test_a_bee_that_ended_while_no_host_ran_is_taken_off_by_the_next_host(make_runtime):
    # its leave found no owner (the host crashed or stopped first): the next host's start
    # takes it off the registry, or it would count as running for the process's life
    rt = make_runtime(AGENT=AGENT + "until_released")
    queue(rt, 6)
    assert claimer_of(rt).run_once().started == (6,)
    [host] = [
        ref
        for ref in pykka.ActorRegistry.get_by_class(HostActor)
        if getattr(HostActor.of(ref), "host", None) is rt.host
    ]
    host.stop()
    agents.RELEASE.set()
    assert wait_for_ending(rt.db, 6).outcome == "finished"
    eventually(lambda: all(bee.ended for bee in rt.work.bees()))
    assert rt.host.running() == 1 and not rt.host.ready  # its leave was dropped
    successor = HostActor.start(rt.host, rt.names)
    try:
        eventually(lambda: rt.host.running() == 0 and rt.host.ready)
    finally:
        successor.stop()


@pytest.mark.through_pgbouncer
def test_an_order_claimed_as_the_drain_begins_is_released_at_once(make_runtime):
    # the drain may begin between the pass's check and the bee's start: the claimed order
    # must go back to the queue, not wait out HIVE_RUNNER_SILENT_MINUTES for the reaper
    rt, other = make_runtime(), make_runtime()
    queue(rt, 9)

    def drain_begins_now() -> None:  # the guard's look at memory is the last step before
        rt.work.begin_drain()

    claimer = Claimer(claimer_ports(rt), claimer_of(rt).config, free_memory=drain_begins_now)
    assert claimer.run_once().started == ()
    order = orders.get(rt.db, 9)
    assert order is not None and order.claimed_by is None and order.finished_at is None
    assert rt.settings.runner_name not in order.refused_by  # not a key refusal
    assert claimer_of(other).run_once().started == (9,)
    assert wait_for_ending(other.db, 9).outcome == "finished"


@pytest.mark.through_pgbouncer
def test_a_pass_claims_its_free_slots_in_one_batch_and_refills_a_refused_ones(make_runtime):
    rt = make_runtime(AGENT=AGENT + "until_released")
    for issue, key_index in ((1, 0), (2, 1), (3, 0), (4, 0), (5, 0)):
        queue(rt, issue, key_index=key_index)  # this runner has no key 1
    result = claimer_of(rt, slots=3).run_once()
    # a batch of three (1, 2, 3): 2 refused, so a second batch of one takes 4
    assert (result.started, result.refused) == ((1, 3, 4), (2,))
    assert rt.metrics.claims._value.get() == 4
    claimed = {o.issue: o.claimed_by for o in orders.listing(rt.db)}
    me = rt.settings.runner_name
    assert claimed == {1: me, 2: None, 3: me, 4: me, 5: None}
    agents.RELEASE.set()
    assert wait_for_ending(rt.db, 4).outcome == "finished"


def test_a_batch_claimed_as_the_drain_begins_is_given_back_whole(make_runtime):
    rt = make_runtime()
    for issue in (9, 10, 11):
        queue(rt, issue)

    def drain_begins_now() -> None:
        rt.work.begin_drain()

    claimer = Claimer(
        claimer_ports(rt), claimer_of(rt, slots=3).config, free_memory=drain_begins_now
    )
    assert claimer.run_once().started == ()
    assert rt.metrics.claims._value.get() == 1  # the first could not start; the rest untouched
    for order in orders.listing(rt.db):
        assert order.claimed_by is None and order.finished_at is None, order
