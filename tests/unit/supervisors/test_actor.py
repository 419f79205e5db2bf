"""SupervisedActor reports its exit, with the reason, through pykka 4's hooks."""

from __future__ import annotations

import threading
from typing import Any

import pykka

from supervisors import SupervisedActor

from .helpers import Crash, Journal, Quit, Worker


def test_the_pykka_hooks_supervision_relies_on_still_exist() -> None:
    for name in ("_actor_loop", "_actor_loop_setup", "_actor_loop_running", "_handle_failure"):
        assert callable(getattr(pykka.Actor, name)), name


def test_a_requested_stop_is_a_normal_exit(journal: Journal) -> None:
    ref = Worker.start("a", journal)
    actor = SupervisedActor.of(ref)
    assert actor is not None
    ref.stop()
    assert actor.supervisor_exit.wait(5)
    assert actor.supervisor_exit.reason is not None and actor.supervisor_exit.reason.normal


def test_stopping_itself_is_a_normal_exit(journal: Journal) -> None:
    ref = Worker.start("a", journal)
    actor = SupervisedActor.of(ref)
    assert actor is not None
    ref.tell(Quit())
    assert actor.supervisor_exit.wait(5)
    assert actor.supervisor_exit.reason is not None and actor.supervisor_exit.reason.normal


def test_a_crash_in_a_tell_is_an_abnormal_exit_with_the_exception(journal: Journal) -> None:
    ref = Worker.start("a", journal)
    actor = SupervisedActor.of(ref)
    assert actor is not None
    ref.tell(Crash())
    assert actor.supervisor_exit.wait(5)
    reason = actor.supervisor_exit.reason
    assert reason is not None and not reason.normal
    assert isinstance(reason.exception, RuntimeError)


def test_a_raise_in_on_start_or_on_stop_is_an_abnormal_exit() -> None:
    class BadStop(SupervisedActor):
        def on_stop(self) -> None:
            raise ValueError("cannot stop cleanly")

    ref = BadStop.start()
    actor = SupervisedActor.of(ref)
    assert actor is not None and actor.supervisor_started.wait(5) and actor.supervisor_start_ok
    ref.stop()
    assert actor.supervisor_exit.wait(5)
    assert str(actor.supervisor_exit.reason) == "ValueError: cannot stop cleanly"

    journal = Journal()
    failing = SupervisedActor.of(Worker.start("f", journal, fail_on_start=True))
    assert failing is not None and failing.supervisor_exit.wait(5)
    assert not failing.supervisor_start_ok


def test_a_caller_waiting_on_an_actor_that_crashes_gets_actor_dead_error() -> None:
    entered = threading.Event()
    release = threading.Event()

    class Slow(SupervisedActor):
        def on_receive(self, message: Any) -> Any:
            if message == "block":
                entered.set()
                release.wait()
                raise RuntimeError("died while others waited")
            return "pong"

    ref = Slow.start()
    ref.tell("block")
    assert entered.wait(5)
    waiting = ref.ask("ping", block=False)
    release.set()
    try:
        waiting.get(timeout=5)
    except pykka.ActorDeadError:
        pass
    else:
        raise AssertionError("the waiting caller got an answer from a dead actor")
