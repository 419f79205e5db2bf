"""What a claim pass costs the store when nothing changed: a NOTIFY wakes every runner,
so a pass writes its runner's row only on a change or once a poll, and a claimer is not
woken by an order's ending (nothing became claimable)."""

from __future__ import annotations

from dataclasses import replace

from hive import configs
from hive.actors.runner import Claimer
from hive.runtime import claimer_ports
from hive.store import runners
from tests.live.runtime.conftest import eventually


def claimer_of(rt, poll_seconds: float) -> Claimer:
    config = replace(
        configs.claimer_config(rt.settings),
        slots=1,
        bee_memory_mb=1024,
        poll_seconds=poll_seconds,
    )
    return Claimer(claimer_ports(rt), config, free_memory=lambda: None)


def seen_at(rt):
    (mine,) = [r for r in runners.listing(rt.db) if r.name == rt.settings.runner_name]
    return mine.seen_at, mine.draining


def test_a_pass_with_nothing_new_does_not_write_the_runners_row_again(make_runtime):
    rt = make_runtime()
    claimer = claimer_of(rt, poll_seconds=3600)
    claimer.run_once()
    first = seen_at(rt)
    claimer.run_once()
    claimer.run_once()
    assert seen_at(rt) == first  # woken twice, wrote nothing
    rt.work.begin_drain()
    claimer.run_once()
    assert seen_at(rt)[1] is True  # a change is written at once


def test_a_pass_writes_the_row_again_once_its_poll_has_passed(make_runtime):
    rt = make_runtime()
    claimer = claimer_of(rt, poll_seconds=0.05)
    claimer.run_once()
    first = seen_at(rt)[0]
    eventually(lambda: claimer.run_once() is not None and seen_at(rt)[0] > first)


def test_the_last_sign_of_life_at_stop_is_always_written(make_runtime):
    rt = make_runtime()
    claimer = claimer_of(rt, poll_seconds=3600)
    claimer.run_once()
    first = seen_at(rt)[0]
    claimer.close()
    assert seen_at(rt)[0] > first
