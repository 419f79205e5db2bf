"""The shape every long-running actor shares: a pass at start, a pass on each wake, a
prompt stop, and a failing pass logged whole once, then in one line, then its recovery."""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

import psycopg

from hive.actors.loop import LoopActor
from hive.actors.messages import OrderEnded
from hive.store import pool
from supervisors import Registry
from tests.live.runtime.conftest import eventually

LONG_INTERVAL_SECONDS = 60.0


class Passes:
    def __init__(self, failures: int = 0) -> None:
        self.count = 0
        self.failures = failures
        self.closed = False
        self.ran = threading.Semaphore(0)

    def run_once(self) -> str:
        self.count += 1
        self.ran.release()
        if self.count <= self.failures:
            raise RuntimeError(f"the store blinked ({self.count})")
        return ""

    def close(self) -> None:
        self.closed = True


def loop(work: Passes, names: Registry) -> Any:
    return LoopActor.start("t", work, LONG_INTERVAL_SECONDS, registry=names, wakes_on=(OrderEnded,))


def test_a_loop_passes_at_start_and_at_once_when_told_and_stops_promptly():
    work, names = Passes(), Registry()
    ref = loop(work, names)
    assert work.ran.acquire(timeout=5)  # the first pass, at start
    assert names.tell("t", OrderEnded(1))
    assert work.ran.acquire(timeout=5)  # woken: no 60 s wait
    began = time.monotonic()
    ref.stop()
    # promptly: not after the rest of the loop's interval
    assert time.monotonic() - began < LONG_INTERVAL_SECONDS / 4 and work.closed
    assert ref.stop() is False  # stopping twice is safe
    assert names.whereis("t") is None  # its name went with it
    assert not names.tell("t", OrderEnded(1))  # dropped: nothing holds the name


def test_a_failing_pass_is_logged_whole_once_then_in_a_line_then_its_recovery(caplog):
    caplog.set_level(logging.INFO, logger="hive.t")
    work, names = Passes(failures=2), Registry()
    ref = loop(work, names)
    for _ in range(3):
        assert work.ran.acquire(timeout=5)
        names.tell("t", OrderEnded(1))
    eventually(lambda: any("works again" in r.getMessage() for r in caplog.records))
    ref.stop()
    lines = [(r.levelname, r.getMessage(), r.exc_info is not None) for r in caplog.records]
    assert lines[:3] == [
        ("ERROR", "t pass failed; next at its interval", True),
        ("WARNING", "t pass failed again (2 in a row): the store blinked (2)", False),
        ("INFO", "t pass works again after 2 failures", False),
    ]


class NotifiesAfterItsFirstLook(Passes):
    """A pass that reads the table, and an order queued (NOTIFY) just after it looked."""

    def __init__(self, url: str) -> None:
        super().__init__()
        self.url = url

    def run_once(self) -> str:
        super().run_once()
        if self.count == 1:
            with pool.connect(self.url) as conn:
                conn.execute("SELECT pg_notify('hive_orders', '1')")
        return ""


def test_a_notify_sent_just_after_the_first_pass_wakes_the_loop(hive_db_url):
    # the loop listens before its first look at the table: a NOTIFY sent after that look
    # is heard, not lost to a LISTEN that came too late (and the work left for a poll)
    work = NotifiesAfterItsFirstLook(hive_db_url)
    ref = LoopActor.start("t", work, LONG_INTERVAL_SECONDS, listen_url=hive_db_url)
    try:
        assert work.ran.acquire(timeout=5)  # the first pass, at start
        assert work.ran.acquire(timeout=5)  # its NOTIFY heard: no 60 s wait
    finally:
        ref.stop()


def test_a_listener_failing_beyond_its_own_repair_does_not_end_the_loop(hive_db_url, caplog):
    # LISTEN refused (a standby during a failover) is not a lost connection the listener
    # mends by reconnecting; the loop drops it, passes, and listens again
    caplog.set_level(logging.WARNING, logger="hive.t")
    work = Passes()
    ref = LoopActor.start("t", work, LONG_INTERVAL_SECONDS, listen_url=hive_db_url)
    try:
        assert work.ran.acquire(timeout=5)  # the first pass, at start
        actor = ref.proxy()._actor  # the loop's own object, to break its listener once
        broken = eventually(lambda: actor._listener)

        def refuse(timeout_seconds: float) -> None:
            raise psycopg.errors.FeatureNotSupported("cannot execute LISTEN during recovery")

        broken.wait = refuse
        assert work.ran.acquire(timeout=5)  # the loop lives on: another pass
        eventually(lambda: actor._listener is not None and actor._listener is not broken)
        with pool.connect(hive_db_url) as conn:
            conn.execute("SELECT pg_notify('hive_orders', '1')")
        assert work.ran.acquire(timeout=5)  # the new listener hears a NOTIFY
        assert any("LISTEN failed" in r.getMessage() for r in caplog.records)
    finally:
        ref.stop()


class StuckPass(Passes):
    """A pass that does not return until the test lets it (a git fetch that hangs)."""

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()
        self.returned = threading.Event()

    def run_once(self) -> str:
        super().run_once()
        self.release.wait(30)
        self.returned.set()
        return ""


def test_a_stop_closes_the_work_even_when_the_pass_in_hand_does_not_return():
    # close() is where the Queen lets her lease go: it must run within the shutdown the
    # tree gives the loop, not wait for a pass that may never end
    work = StuckPass()
    ref = LoopActor.start("t", work, LONG_INTERVAL_SECONDS, join_seconds=0.3)
    try:
        assert work.ran.acquire(timeout=5)  # the pass is in hand, and stuck
        ref.stop(timeout=5)
        # closed while the pass is still in hand: the stop did not wait for it
        assert work.closed and not work.returned.is_set()
    finally:
        work.release.set()
