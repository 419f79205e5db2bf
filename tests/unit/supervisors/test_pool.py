"""The dynamic pool (simple_one_for_one): start_child, terminate_child, parallel stop."""

from __future__ import annotations

import contextlib
import threading

import pytest

from supervisors import (
    ChildKind,
    ChildSpec,
    NoSuchChild,
    Pool,
    Restart,
    StartError,
    StopOutcome,
    Supervisor,
    SupervisorStopped,
)

from .helpers import DEADLINE_SECONDS, Crash, Journal, Worker, ref_of, worker

# how long a child's stop waits for the other fifteen to be stopping too: under the
# worker's default shutdown, so the wait never turns into a kill
GATE_SECONDS = 4.0


def _template(journal: Journal, restart: Restart = Restart.TEMPORARY, **kw: object) -> ChildSpec:
    def start(name: str, fail: bool = False) -> object:
        return Worker.start(name, journal, fail_on_start=fail, **kw)

    return ChildSpec("bee", start, restart=restart)


def test_start_child_passes_its_arguments_and_names_the_child(journal: Journal) -> None:
    pool = Pool("bees", _template(journal)).start()
    assert pool.start_child("slot-a") == "bee-1"
    assert pool.start_child("slot-b", child_id="slot-b") == "slot-b"
    assert journal.of("start") == ["slot-a", "slot-b"]
    with pytest.raises(ValueError, match="already has a child 'slot-b'"):
        pool.start_child("again", child_id="slot-b")
    assert pool.count_children().active == 2
    pool.stop()


def test_a_child_that_fails_to_start_is_an_error_to_the_caller_not_a_restart(
    journal: Journal,
) -> None:
    pool = Pool("bees", _template(journal), intensity=0).start()
    with pytest.raises(StartError, match="cannot start"):
        pool.start_child("bad", True)
    assert pool.alive and pool.count_children().specs == 0
    pool.stop()


def test_terminate_child_stops_and_forgets_it(journal: Journal) -> None:
    pool = Pool("bees", _template(journal, Restart.PERMANENT)).start()
    cid = pool.start_child("one")
    done = pool.terminate_child(cid)
    assert done.outcome is StopOutcome.STOPPED
    assert journal.of("stop") == ["one"]
    assert pool.which_children() == []
    with pytest.raises(NoSuchChild, match="has no child 'bee-1'"):
        pool.terminate_child(cid)
    pool.stop()
    with pytest.raises(SupervisorStopped):
        pool.start_child("late")


def test_temporary_pool_child_is_not_restarted(journal: Journal) -> None:
    pool = Pool("bees", _template(journal)).start()
    cid = pool.start_child("t")
    ref_of(pool, cid).tell(Crash())
    journal.wait_until(lambda: pool.which_children() == [])
    assert journal.count("start", "t") == 1
    pool.stop()


def test_permanent_pool_child_is_restarted_with_the_same_arguments(journal: Journal) -> None:
    pool = Pool("bees", _template(journal, Restart.PERMANENT)).start()
    cid = pool.start_child("p")
    ref_of(pool, cid).tell(Crash())
    journal.wait_until(lambda: journal.count("start", "p") == 2)
    pool.stop()


def test_sixteen_children_stop_in_parallel(journal: Journal) -> None:
    # each child's stop waits until all sixteen are stopping: stops one after another
    # would hold the first at this gate until its deadline, and end it before the others
    # began (the order shows it, whatever the machine's load)
    def all_stopping() -> None:
        with contextlib.suppress(AssertionError):
            journal.wait_until(lambda: len(journal.of("stopping")) == 16, GATE_SECONDS)

    pool = Pool("bees", _template(journal, stop_gate=all_stopping)).start()
    for n in range(16):
        pool.start_child(f"b{n}")
    pool.stop()
    assert len(journal.of("stop")) == 16
    whats = [what for what, _ in journal.entries if what in ("stopping", "stop")]
    assert whats == ["stopping"] * 16 + ["stop"] * 16, whats


def test_pool_as_a_child_of_a_rest_for_one_supervisor(journal: Journal) -> None:
    root = Supervisor(
        "runner",
        [
            ChildSpec("bees", lambda: Pool("bees", _template(journal)), kind=ChildKind.SUPERVISOR),
            worker("claimer", journal),
        ],
    ).start()
    pool = ref_of(root, "bees")
    pool.start_child("b1")
    root.stop()
    assert journal.of("stop") == ["claimer", "b1"]


def test_a_start_asked_once_the_pool_is_stopping_fails_at_once(journal: Journal) -> None:
    # the pool's thread is busy (a child still starting) when its stop is asked: a start
    # asked after that used to queue behind the stop and wait out every child's shutdown
    # (a bee pool's is the drain's hold), only to fail then
    opened = threading.Event()
    starting = threading.Event()

    def start(name: str, gate: bool = False) -> object:
        if gate:
            starting.set()
            opened.wait()
        return Worker.start(name, journal)

    pool = Pool("bees", ChildSpec("bee", start, restart=Restart.TEMPORARY)).start()
    first = threading.Thread(target=pool.start_child, args=("slow", True))
    first.start()
    try:
        assert starting.wait(DEADLINE_SECONDS)
        pool.stop(block=False)
        late: list[BaseException] = []
        asker = threading.Thread(target=lambda: late.append(_refusal(pool)))
        asker.start()
        asker.join(DEADLINE_SECONDS)
        assert not asker.is_alive(), "the late start waited on the stopping pool"
        assert isinstance(late[0], SupervisorStopped)
    finally:
        opened.set()
        first.join(DEADLINE_SECONDS)
    assert pool.wait(DEADLINE_SECONDS) is not None
    assert journal.of("start") == ["slow"] and journal.of("stop") == ["slow"]


def _refusal(pool: Pool) -> BaseException:
    try:
        pool.start_child("late")
    except BaseException as err:
        return err
    raise AssertionError("a stopping pool started a child")
