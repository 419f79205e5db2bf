"""A bee against the real store and real processes: it ends its order with a bundle that
the real `git bundle verify` accepts, writes its transcript, stops when its heartbeat
finds the row gone (writing nothing more), honours the turn bound, hands back, and sorts
a quota refusal."""

from __future__ import annotations

import os
import subprocess
import threading
import time
import uuid
from pathlib import Path

import pytest
from dulwich.object_store import tree_lookup_path

from hive.actors.bee.bee import Bee
from hive.actors.bee.order import BeeOrder
from hive.actors.bee.state import BeeState
from hive.git.worktrees import SPARE_DIRNAME
from hive.rules.drain import WK_BEE
from hive.rules.lifecycle import ReviewState
from hive.rules.states import VERDICT_SENDBACK, Outcome
from hive.runtime import bee_ports
from hive.store import bundles, endings, orders, reaping, reviews, transcript
from hive.store.orders import Fence
from hive.store.reviews import Verdict
from hive.testing import wait_for_ending
from tests.live.runtime import agents
from tests.live.runtime.conftest import AGENT, eventually, queue
from tests.live.runtime.test_runner import claimer_of


def run_one(rt, issue: int) -> Bee:
    """Queue `issue` and let a claimer start its bee; the bee, once its turn began."""
    queue(rt, issue)
    assert claimer_of(rt).run_once().started == (issue,)
    bees = [b for b in rt.work.items() if b.kind == WK_BEE and b.issue == issue]
    return bees[0]  # type: ignore[return-value]


def git(*args: str, cwd: Path) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return done.stdout + done.stderr


def test_bee_ends_the_order_with_a_bundle_git_verifies_and_fetches(
    make_runtime, hive_repo, tmp_path
):
    rt = make_runtime()
    run_one(rt, 1)
    order = wait_for_ending(rt.db, 1)
    assert order.outcome == "finished"
    stored = bundles.get(rt.db, 1)
    assert stored is not None and stored.runner == rt.settings.runner_name
    path = tmp_path / "queen-1.bundle"
    path.write_bytes(stored.data)
    clone = tmp_path / "clone"
    git("clone", "-q", str(hive_repo), str(clone), cwd=tmp_path)
    assert "is okay" in git("bundle", "verify", str(path), cwd=clone)
    git("fetch", "-q", str(path), "queen-1:queen-1", cwd=clone)
    assert git("show", "queen-1:src/app.py", cwd=clone) == "done by the bee of #1\n"
    assert "salvage (finished)" in git("log", "-1", "--format=%s", "queen-1", cwd=clone)
    assert rt.metrics.bundle_bytes._sum.get() == len(stored.data)


def test_bee_writes_the_turn_transcript_to_the_store(make_runtime):
    rt = make_runtime()
    run_one(rt, 2)
    order = wait_for_ending(rt.db, 2)
    lines = transcript.read(rt.db, order.conversation_id)
    assert ("stdout", "working on #2") in [(line.kind, line.text) for line in lines]


@pytest.mark.through_pgbouncer
def test_heartbeat_that_finds_its_row_gone_stops_the_turn_and_writes_nothing(make_runtime):
    rt = make_runtime(AGENT=AGENT + "until_stopped")
    bee = run_one(rt, 3)
    eventually(lambda: rt.metrics.heartbeats._value.get() >= 1)
    reaped = reaping.reap_silent_runners(rt.db, 0.0).ended  # another process's reaper
    assert [o.issue for o in reaped] == [3]
    assert bee.wait(10)
    order = orders.get(rt.db, 3)
    assert order is not None and order.outcome == "reaped: runner silent"
    assert bundles.get(rt.db, 3) is None
    assert rt.metrics.heartbeat_lost._value.get() == 1
    eventually(lambda: rt.host.running() == 0)  # its leave reaches the host after its end
    assert bee.state is BeeState.ENDED and bee.outcome is None  # it ended nothing


def test_a_bee_moves_only_along_its_life():
    bee = Bee(None, BeeOrder(Fence(1, uuid.uuid4(), "r"), None), None)  # type: ignore[arg-type]
    with bee._changed:
        assert bee._to(BeeState.RUNNING) is BeeState.STARTING
        assert bee._to(BeeState.HANDING_BACK) is BeeState.RUNNING
        with pytest.raises(AssertionError, match="from handing back to running"):
            bee._to(BeeState.RUNNING)
        bee._to(BeeState.ENDING)
        bee._to(BeeState.ENDED)
        for state in BeeState:
            with pytest.raises(AssertionError):
                bee._to(state)
    assert bee.ended and bee.wait(0)


def test_a_failed_renewal_is_retried_not_death(make_runtime, monkeypatch):
    rt = make_runtime(AGENT=AGENT + "until_released")
    calls = {"n": 0}
    real = orders.heartbeat

    def flaky(db, fence):
        calls["n"] += 1
        if calls["n"] == 1:
            raise OSError("the store blinked")
        return real(db, fence)

    monkeypatch.setattr(orders, "heartbeat", flaky)
    bee = run_one(rt, 4)
    eventually(lambda: rt.metrics.heartbeats._value.get() >= 1)
    assert not bee.ended
    assert rt.metrics.heartbeat_lost._value.get() == 0


def test_a_turn_past_its_bound_is_stopped_and_ends_badly(make_runtime):
    rt = make_runtime(AGENT=AGENT + "until_stopped", TURN_MAX_SECONDS="1")
    run_one(rt, 5)
    order = wait_for_ending(rt.db, 5)
    assert order.outcome == "ended badly"
    assert order.detail == "stopped past its bound (HIVE_TURN_MAX_SECONDS)"


def test_hand_back_kills_the_turn_salvages_and_ends_the_order_handed_back(make_runtime):
    marker = f"{60 + uuid.uuid4().int % 1000 / 1000:.3f}"  # a sleep only this test runs
    rt = make_runtime(
        AGENT=f"command:echo half done >> src/app.py; sleep {marker} & sleep {marker}"
    )
    bee = run_one(rt, 6)
    written = rt.settings.workdir / "queen-6" / "src/app.py"
    eventually(lambda: written.exists() and "half done" in written.read_text())
    assert bee.hand_back()
    order = orders.get(rt.db, 6)
    assert order is not None and order.outcome == "handed back"
    stored = bundles.get(rt.db, 6)
    assert stored is not None
    head = rt.checkout.repo[stored.head_sha.encode()]
    assert head.message.startswith(b"salvage (handed back): 1 file")
    assert rt.metrics.handed_back._value.get() == 1
    ps = subprocess.run(["pgrep", "-f", f"sleep {marker}"], capture_output=True, text=True)
    assert ps.stdout == ""  # the whole group is gone, the background sleep too


def test_a_quota_refusal_ends_the_order_quota_exhausted(make_runtime):
    rt = make_runtime(AGENT=AGENT + "quota")
    run_one(rt, 7)
    order = wait_for_ending(rt.db, 7)
    assert order.outcome == "quota exhausted"
    assert order.detail == "the provider refused the turn (quota)"


def test_a_bee_handed_back_before_its_turn_started_stops_it_as_it_starts(make_runtime):
    rt = make_runtime(AGENT=AGENT + "until_stopped")
    queue(rt, 8)
    answers: list[bool] = []
    with rt.checkout.lock:  # the bee's cut waits here: its turn has not started
        assert claimer_of(rt).run_once().started == (8,)
        bee = next(b for b in rt.work.items() if b.kind == WK_BEE)
        asking = threading.Thread(target=lambda: answers.append(bee.hand_back(10)))
        asking.start()
        eventually(lambda: bee.state is BeeState.HANDING_BACK)  # type: ignore[attr-defined]
    asking.join(15)
    assert answers == [True]
    assert orders.get(rt.db, 8).outcome == "handed back"  # type: ignore[union-attr]


def test_a_second_hand_back_waits_only_for_the_rest_of_the_first_deadline(make_runtime):
    rt = make_runtime(AGENT=AGENT + "ignores_stop")
    queue(rt, 9)
    claimer_of(rt).run_once()
    bee = next(b for b in rt.work.items() if b.kind == WK_BEE)
    eventually(lambda: bee.state is BeeState.RUNNING)  # type: ignore[attr-defined]
    began = time.monotonic()
    # the first hand-back (the drain's) gives up on a turn that cannot be killed
    assert not bee.hand_back(0.5)
    # the tree's stop that follows waits for nothing more than the first deadline
    assert not bee.hand_back(20)
    assert time.monotonic() - began < 10
    agents.RELEASE.set()
    assert bee.wait(10)
    assert orders.get(rt.db, 9).outcome == "handed back"  # type: ignore[union-attr]


def test_a_next_attempt_continues_the_branch_another_runner_stored(make_runtime, hive_repo):
    a = make_runtime(AGENT=AGENT + "append")
    b = make_runtime(AGENT=AGENT + "append")
    for attempt, runtime in enumerate((a, b, a), start=1):
        queue(runtime, 10)  # a new attempt replaces the row its review sent back
        assert claimer_of(runtime).run_once().started == (10,)
        order = wait_for_ending(runtime.db, 10)
        assert order.attempt == attempt and order.outcome == "finished"
        sendback = Verdict(VERDICT_SENDBACK, ReviewState.SENDBACK, "again")
        # the worktree goes before the row ends: the next attempt may be claimed here
        assert not (runtime.settings.workdir / "queen-10").exists()  # the work is stored
        assert reviews.write_verdict(runtime.db, 10, order.conversation_id, sendback).landed
        eventually(lambda rt=runtime: rt.host.running() == 0)  # the row ends before the bee
    stored = bundles.get(a.db, 10)
    assert stored is not None
    head = a.checkout.repo[stored.head_sha.encode()]  # a's clone holds what it bundled
    _, blob = tree_lookup_path(a.checkout.repo.__getitem__, head.tree, b"src/app.py")
    lines = a.checkout.repo[blob].data.decode().splitlines()
    assert lines[1:] == ["a turn in work-0", "a turn in work-1", "a turn in work-0"]
    # a's third turn ran in its first turn's worktree, parked and brought forward; parked again
    assert len(os.listdir(a.settings.workdir / SPARE_DIRNAME)) == 1


def test_the_bee_actor_answers_while_its_turn_runs(make_runtime):
    rt = make_runtime(AGENT=AGENT + "until_released")
    queue(rt, 11)
    claimer_of(rt).run_once()
    children = [c for c in rt.host._pool.which_children() if c.running]  # type: ignore[union-attr]
    actor = children[0].target.proxy()
    eventually(lambda: actor.status().get(timeout=1).turn_started)
    status = actor.status().get(timeout=1)  # answered while the turn runs
    assert (status.issue, status.runner) == (11, rt.settings.runner_name)
    assert status.state is BeeState.RUNNING
    agents.RELEASE.set()
    assert wait_for_ending(rt.db, 11).outcome == "finished"
    # the bee's thread tells its actor BeeDone once the bee ended: the actor stops
    eventually(lambda: not any(c.running for c in rt.host._pool.which_children()))  # type: ignore[union-attr]


def test_a_runner_bee_whose_start_did_not_land_leaves_no_worktree(make_runtime):
    # the row was reaped between the claim and the turn's start: the cut worktree must
    # go, or the next attempt here starts from it instead of the branch the store has
    from hive.actors.bee.order import BeeOrder, Start, StartReply
    from hive.actors.bee.start import plan_of
    from hive.git.worktrees import worktree_path

    rt = make_runtime()
    queue(rt, 12)
    claimed = orders.claim(rt.db, rt.settings.runner_name)
    assert claimed is not None
    assert endings.end(rt.db, endings.OrderEnding(claimed.fence, Outcome.REAPED_RUNNER_SILENT))
    plan = plan_of(
        rt.bee.start, issue=12, title="t", body="", base="main", base_sha=None,
        boundary=("src/app.py",), brief="", key="",
    )  # fmt: skip
    bee = Bee(bee_ports(rt), BeeOrder(claimed.fence, plan), rt.bee)
    bee.run()
    assert bee.wait(30) and not bee.landed
    assert bee.order.reply.get(timeout=0) == StartReply(Start.TAKEN)  # its one answer
    assert not worktree_path(rt.checkout.workdir, 12).exists()


class _NextAttempt:
    """A bee of the same issue that counts in the process (its cut is about to come)."""

    kind = WK_BEE
    ended = False

    def __init__(self, issue: int) -> None:
        self.issue = issue
        self.id = f"bee-{issue}-next"


def test_an_ending_bee_leaves_the_worktree_to_a_next_attempt_of_its_issue_here(make_runtime):
    # the path is the issue's: a next attempt claimed here while this turn was stopped
    # cuts the same one, and the old bee's removal must not take it from under it
    from hive.git.worktrees import worktree_path

    rt = make_runtime(AGENT=AGENT + "until_released")
    bee = run_one(rt, 13)
    eventually(lambda: bee.state is BeeState.RUNNING)  # type: ignore[attr-defined]
    leave_next = rt.work.add(_NextAttempt(13))
    agents.RELEASE.set()
    assert wait_for_ending(rt.db, 13).outcome == "finished"
    assert bee.wait(10)
    assert worktree_path(rt.checkout.workdir, 13).exists()
    leave_next()


class _WatchedLock:
    """The checkout's lock, noting whether the issue's row had ended each time a bee's
    thread took it (a runner's bee takes it to remove its worktree)."""

    def __init__(self, db, issue: int) -> None:
        self._lock = threading.Lock()
        self._db, self._issue = db, issue
        self.row_ended_at_take: list[bool] = []

    def __enter__(self) -> None:
        self._lock.acquire()
        if threading.current_thread().name == f"bee-{self._issue}":
            order = orders.get(self._db, self._issue)
            self.row_ended_at_take.append(order is not None and order.finished_at is not None)

    def __exit__(self, *exc: object) -> None:
        self._lock.release()


def test_a_runner_bee_removes_its_worktree_before_its_row_ends(make_runtime):
    # once the row is ended a next attempt may be claimed here and cut the same path:
    # a removal after the ending could take that attempt's worktree
    rt = make_runtime()
    watched = _WatchedLock(rt.db, 14)
    object.__setattr__(rt.checkout, "lock", watched)
    run_one(rt, 14)
    assert wait_for_ending(rt.db, 14).outcome == "finished"
    eventually(lambda: rt.host.running() == 0)
    # taken twice by the bee's thread: its cut, then its removal, both before the ending
    assert watched.row_ended_at_take == [False, False]
