"""The drain card over doubles of all five kinds of work, on a test clock: bees held to
the end or the cap, then handed back together under one deadline; reviews stopped;
rounds, jobs and waits left; the exit when `exit_step` says so; the summary line. And
the DrainActor on a real SignalBridge: the drain runs while the tree runs, then the tree
stops."""

from __future__ import annotations

import threading
import time

from hive.actors.drain import DRAIN_STEP_SECONDS, Drain, DrainActor, DrainConfig
from hive.actors.work import WorkRegistry
from hive.metrics import HiveMetrics
from hive.rules.drain import WK_BEE, WK_JOB, WK_REVIEW, WK_ROUND, WK_WAIT
from supervisors import ChildSpec, SignalBridge, Supervisor

CAP_SECONDS = 10


class Double:
    """A piece of work of any kind; `stop()` / `hand_back()` end it when told to."""

    def __init__(self, kind: int, name: str, ends_when_asked: bool = True) -> None:
        self.kind, self.id = kind, name
        self.ends_when_asked = ends_when_asked
        self.stopped = threading.Event()
        self.handed_back = threading.Event()
        self._ended = threading.Event()

    @property
    def ended(self) -> bool:
        return self._ended.is_set()

    def end(self) -> None:
        self._ended.set()

    def stop(self) -> None:
        self.stopped.set()
        if self.ends_when_asked:
            self.end()

    def hand_back(self) -> None:
        self.handed_back.set()
        if self.ends_when_asked:
            self.end()


class Watched(Double):
    """A bee double that counts the drain's looks at it (`looked`), and leaves the
    registry once it ended, as a bee does (`remove`, given when it is added)."""

    def __init__(self, kind: int, name: str) -> None:
        super().__init__(kind, name)
        self.looked = threading.Semaphore(0)
        self.remove = lambda: None

    @property
    def ended(self) -> bool:
        self.looked.release()
        return self._ended.is_set()

    def end(self) -> None:
        super().end()
        self.remove()


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def drain_over(*items: Double, hand_back_seconds: float = 20) -> tuple[Drain, Clock, WorkRegistry]:
    work, clock = WorkRegistry(), Clock()
    for item in items:
        work.add(item)
    config = DrainConfig(cap_seconds=CAP_SECONDS, hand_back_seconds=hand_back_seconds)
    return Drain(work, HiveMetrics(), config, clock), clock, work


def test_a_bee_is_held_until_it_ends_on_its_own():
    bee = Double(WK_BEE, "bee-1")
    drain, clock, _ = drain_over(bee)
    step = drain.run_once()
    assert not step.exit and step.holding == 1
    clock.now += CAP_SECONDS - 1
    assert not drain.run_once().exit
    bee.end()
    assert drain.run_once().exit
    assert not bee.handed_back.is_set()
    assert "held at start 1, ended on their own 1, handed back 0" in drain.summary()


def test_a_bee_that_ended_and_left_the_registry_still_counts_as_ended_on_its_own():
    bee = Double(WK_BEE, "bee-1")
    work, clock = WorkRegistry(), Clock()
    remove = work.add(bee)
    drain = Drain(work, HiveMetrics(), DrainConfig(cap_seconds=CAP_SECONDS), clock)
    drain.run_once()
    bee.end()
    remove()
    assert drain.run_once().exit
    assert "ended on their own 1" in drain.summary()


def test_at_the_cap_every_held_bee_is_handed_back_together():
    bees = [Double(WK_BEE, f"bee-{n}") for n in (1, 2)]
    drain, clock, _ = drain_over(*bees)
    drain.run_once()
    clock.now += CAP_SECONDS
    drain.run_once()
    assert all(bee.handed_back.wait(5) for bee in bees)
    assert drain.run_once().exit
    assert "held at start 2, ended on their own 0, handed back 2" in drain.summary()


def test_a_hand_back_that_never_ends_is_left_at_the_one_deadline():
    stuck = Double(WK_BEE, "bee-stuck", ends_when_asked=False)
    drain, clock, _ = drain_over(stuck, hand_back_seconds=20)
    clock.now += CAP_SECONDS
    assert not drain.run_once().exit
    clock.now += 19
    assert not drain.run_once().exit
    clock.now += 1
    assert drain.run_once().exit
    assert stuck.handed_back.is_set()
    assert "given up 1" in drain.summary()


def test_a_review_is_stopped_and_the_exit_waits_for_the_stop_to_land():
    review = Double(WK_REVIEW, "review-1", ends_when_asked=False)
    drain, clock, _ = drain_over(review)
    step = drain.run_once()
    assert review.stopped.wait(5)
    assert not step.exit and step.stopping == 1 and step.holding == 0
    clock.now += 4.9
    assert not drain.run_once().exit
    clock.now += 0.1  # LANE_FREE_MS after the stop: the stop has landed
    assert drain.run_once().exit
    assert "stopped 1" in drain.summary()


def test_a_review_that_ended_on_its_stop_lets_the_process_exit_at_once():
    review = Double(WK_REVIEW, "review-1")
    drain, _, _ = drain_over(review)
    drain.run_once()
    assert review.stopped.wait(5)
    assert drain.run_once().exit


def test_rounds_jobs_and_waits_are_left_to_the_store_and_the_exit_is_at_once():
    left = [Double(WK_ROUND, "round"), Double(WK_JOB, "job-1"), Double(WK_WAIT, "wait-1")]
    drain, _, _ = drain_over(*left)
    assert drain.run_once().exit
    assert not any(d.stopped.is_set() or d.handed_back.is_set() for d in left)
    assert "left 3" in drain.summary()


def test_all_five_kinds_at_once():
    bee, review = Double(WK_BEE, "bee"), Double(WK_REVIEW, "review")
    rest = [Double(WK_ROUND, "round"), Double(WK_JOB, "job"), Double(WK_WAIT, "wait")]
    drain, clock, _ = drain_over(bee, review, *rest)
    assert drain.run_once().holding == 1
    assert review.stopped.wait(5)
    clock.now += CAP_SECONDS
    drain.run_once()
    assert bee.handed_back.wait(5)
    assert drain.run_once().exit
    summary = drain.summary()
    assert summary.startswith(f"drain: cap {CAP_SECONDS} s, took {CAP_SECONDS}.0 s;")
    assert summary.endswith(
        "held at start 1, ended on their own 0, handed back 1, stopped 1, left 3"
    )


def test_the_held_gauge_follows_the_bees_held():
    bee = Double(WK_BEE, "bee")
    drain, _, _ = drain_over(bee)
    drain.run_once()
    assert drain.metrics.drain_held._value.get() == 1
    bee.end()
    drain.run_once()
    assert drain.metrics.drain_held._value.get() == 0


def test_drain_actor_runs_the_card_on_the_signal_while_the_tree_runs(make_runtime):
    rt = make_runtime()
    bee = Double(WK_BEE, "bee")
    rt.work.add(bee)
    bridge = SignalBridge()
    config = DrainConfig(cap_seconds=60, step_seconds=0.05)
    root = Supervisor(
        "t",
        [
            ChildSpec(
                "drain", DrainActor.start, args=(rt.work, rt.metrics, rt.names, bridge, config)
            )
        ],
    )
    bridge.root = root
    root.start()
    bridge.request_stop()
    assert root.wait(0.3) is None  # held: the tree keeps running
    assert rt.work.draining and not rt.host.ready
    bee.end()
    reason = root.wait(10)
    assert reason is not None and reason.normal


def test_drain_actor_exits_at_once_when_the_last_held_bee_ends_not_at_its_next_step(
    make_runtime,
):
    rt = make_runtime()
    bee = Watched(WK_BEE, "bee")
    bee.remove = rt.work.add(bee)
    bridge = SignalBridge()
    config = DrainConfig(cap_seconds=60)  # the real step: DRAIN_STEP_SECONDS
    assert config.step_seconds == DRAIN_STEP_SECONDS == 1.0
    root = Supervisor(
        "t",
        [
            ChildSpec(
                "drain", DrainActor.start, args=(rt.work, rt.metrics, rt.names, bridge, config)
            )
        ],
    )
    bridge.root = root
    root.start()
    bridge.request_stop()
    # two looks: the drain has begun and a step has seen the bee running (held), so the
    # end lands at the start of a step's wait, where a drain that only steps would wait
    # out almost the whole second
    assert bee.looked.acquire(timeout=5) and bee.looked.acquire(timeout=5)
    ended_at = time.monotonic()
    bee.end()
    reason = root.wait(10)
    end_to_exit = time.monotonic() - ended_at
    assert reason is not None and reason.normal
    assert end_to_exit < 0.5, f"the drain exited {end_to_exit:.2f} s after the last bee ended"
    assert rt.metrics.drain_held._value.get() == 0
