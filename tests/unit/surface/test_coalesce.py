"""Coalesced: callers share a computation, and none gets one that began before its call."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from hive.http.coalesce import Coalesced


def wait_until(check, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "the condition never held"
        time.sleep(0.005)


def test_a_caller_who_arrives_during_a_computation_gets_the_next_one():
    gates = [threading.Event(), threading.Event()]
    started: list[int] = []

    def compute() -> int:
        started.append(len(started) + 1)
        gates[len(started) - 1].wait(5)
        return len(started)

    shared = Coalesced(compute)
    with ThreadPoolExecutor(2) as pool:
        first = pool.submit(shared)
        wait_until(lambda: started == [1])
        late = pool.submit(shared)
        wait_until(lambda: shared._next is not None)  # it waits for the next computation
        gates[0].set()
        assert first.result(5) == 1
        gates[1].set()
        assert late.result(5) == 2
    assert started == [1, 2]


def test_under_load_every_answer_began_after_its_call_and_work_is_shared():
    count = 0
    lock = threading.Lock()

    def compute() -> int:
        nonlocal count
        with lock:
            count += 1
            mine = count
        time.sleep(0.002)
        return mine

    shared = Coalesced(compute)

    def call() -> tuple[int, int]:
        with lock:
            before = count
        return before, shared()

    with ThreadPoolExecutor(16) as pool:
        pairs = list(pool.map(lambda _: call(), range(400)))
    assert all(got > before for before, got in pairs)
    assert count < 400  # shared: fewer computations than calls


def test_an_error_reaches_every_caller_it_answers_and_the_next_call_computes_again():
    calls = []

    def compute() -> int:
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("store down")
        return 7

    shared = Coalesced(compute)
    with pytest.raises(RuntimeError, match="store down"):
        shared()
    assert shared() == 7


def test_within_its_moment_a_caller_joins_the_running_computation():
    gate = threading.Event()
    started: list[int] = []

    def compute() -> int:
        started.append(len(started) + 1)
        gate.wait(5)
        return len(started)

    shared = Coalesced(compute, moment_seconds=60)
    with ThreadPoolExecutor(3) as pool:
        first = pool.submit(shared)
        wait_until(lambda: started == [1])
        late = [pool.submit(shared), pool.submit(shared)]
        running = shared._running
        assert running is not None  # both wait on it (CPython's Event keeps its waiters)
        wait_until(lambda: len(running.done._cond._waiters) == 2)  # type: ignore[attr-defined]
        gate.set()
        assert [first.result(5), *(f.result(5) for f in late)] == [1, 1, 1]
    assert started == [1] and shared._next is None
    assert shared() == 2  # once it ended, the next caller starts a new one
