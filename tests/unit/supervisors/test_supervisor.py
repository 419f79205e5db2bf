"""The lifecycle contract, restart intensity, bounded stops and reports."""

from __future__ import annotations

import threading
import time

import pykka
import pytest

from supervisors import (
    BRUTAL_KILL,
    ChildKind,
    ChildSpec,
    Event,
    ExitReason,
    StartError,
    Strategy,
    Supervisor,
    SupervisorStopped,
)

from .helpers import Block, Crash, Journal, Worker, ref_of, worker


def test_stop_is_safe_twice_and_before_start(journal: Journal) -> None:
    never_started = Supervisor("idle", [worker("a", journal)])
    assert never_started.stop() == ExitReason.shutdown()
    assert never_started.stop() == ExitReason.shutdown()
    with pytest.raises(SupervisorStopped, match="cannot start twice"):
        never_started.start()
    sup = Supervisor("root", [worker("a", journal)]).start()
    first = sup.stop()
    assert first is not None and first.normal
    assert sup.stop() == first
    assert journal.of("stop") == ["a"]
    assert not sup.alive


def test_a_child_failing_to_start_fails_the_start_and_stops_the_others_in_reverse(
    journal: Journal,
) -> None:
    children = [
        worker("a", journal),
        worker("b", journal),
        worker("c", journal, fail_on_start=True),
    ]
    sup = Supervisor("root", children)
    with pytest.raises(StartError, match="child 'c' failed to start: RuntimeError: c cannot"):
        sup.start()
    assert journal.of("stop") == ["b", "a"]
    reason = sup.wait(0)
    assert reason is not None and not reason.normal


def test_a_factory_returning_a_plain_pykka_actor_is_a_clear_start_error() -> None:
    class Plain(pykka.ThreadingActor):
        pass

    sup = Supervisor("root", [ChildSpec("p", Plain.start)])
    with pytest.raises(StartError, match="expected a SupervisedActor's ref or a Supervisor"):
        sup.start()


def test_exceeding_the_intensity_stops_children_in_reverse_and_escalates(
    journal: Journal,
) -> None:
    inner_children = [worker("x", journal), worker("y", journal), worker("z", journal)]

    def inner() -> Supervisor:
        return Supervisor("inner", inner_children, intensity=0)

    root = Supervisor(
        "root",
        [worker("a", journal), ChildSpec("inner", inner, kind=ChildKind.SUPERVISOR)],
        intensity=0,
    ).start()
    inner_sup = ref_of(root, "inner")
    mark = journal.mark()
    ref_of(inner_sup, "y").tell(Crash())
    reason = root.wait(5)
    assert reason is not None and not reason.normal
    assert "root gave up" in str(reason) and "inner gave up" in str(reason)
    assert journal.since(mark, "stop") == ["z", "x", "a"]
    assert inner_sup.stats()["gave_up"] == 1 and root.stats()["gave_up"] == 1


def test_a_nested_supervisor_that_gives_up_is_restarted_by_its_parent(journal: Journal) -> None:
    def inner() -> Supervisor:
        return Supervisor("inner", [worker("x", journal)], intensity=0)

    root = Supervisor("root", [ChildSpec("inner", inner, kind=ChildKind.SUPERVISOR)]).start()
    ref_of(ref_of(root, "inner"), "x").tell(Crash())
    journal.wait_until(lambda: root.stats().get("child_restarted") == 1)
    assert journal.count("start", "x") == 2
    root.stop()


def test_a_child_that_ignores_its_stop_is_killed_at_its_timeout_and_the_tree_stops(
    journal: Journal, release: threading.Event
) -> None:
    timeout = 0.2
    sup = Supervisor("root", [worker("a", journal), worker("stuck", journal, shutdown=timeout)])
    sup.start()
    ref_of(sup, "stuck").tell(Block(release))
    journal.wait_until(lambda: journal.of("blocked") == ["stuck"])
    began = time.monotonic()
    reason = sup.stop(timeout=5)
    took = time.monotonic() - began
    assert reason is not None and reason.normal  # within the stop's own 5 s
    assert journal.of("kill") == ["stuck"]
    assert journal.of("stop") == ["a"]
    assert took >= timeout
    assert journal.of("unblocked") == [], "the tree waited for the stuck handler"
    assert sup.stats()["shutdown_abandoned"] == 1


def test_brutal_kill_does_not_ask_first(journal: Journal, release: threading.Event) -> None:
    sup = Supervisor("root", [worker("b", journal, shutdown=BRUTAL_KILL)]).start()
    ref_of(sup, "b").tell(Block(release))
    journal.wait_until(lambda: journal.of("blocked") == ["b"])
    sup.stop()
    assert journal.of("kill") == ["b"]
    assert journal.of("unblocked") == [], "the tree waited for the blocked handler"


def test_kill_runs_every_kill_hook_in_the_tree_and_exits_at_once(
    journal: Journal, release: threading.Event
) -> None:
    def inner() -> Supervisor:
        return Supervisor("inner", [worker("x", journal)])

    root = Supervisor(
        "root", [worker("a", journal), ChildSpec("inner", inner, kind=ChildKind.SUPERVISOR)]
    ).start()
    ref_of(root, "a").tell(Block(release))
    journal.wait_until(lambda: journal.of("blocked") == ["a"])
    root.kill(ExitReason(False, "hard stop", exit_code=143))
    reason = root.wait(0)
    assert reason is not None and reason.exit_code == 143
    assert sorted(journal.of("kill")) == ["a", "x"]


def test_which_children_and_count_children_describe_the_tree(journal: Journal) -> None:
    def inner() -> Supervisor:
        return Supervisor("inner", [])

    sup = Supervisor(
        "root", [worker("a", journal), ChildSpec("s", inner, kind=ChildKind.SUPERVISOR)]
    ).start()
    rows = sup.which_children()
    assert [(r.id, r.kind, r.running) for r in rows] == [
        ("a", ChildKind.WORKER, True),
        ("s", ChildKind.SUPERVISOR, True),
    ]
    assert isinstance(rows[0].target, pykka.ActorRef)
    assert isinstance(rows[1].target, Supervisor)
    counts = sup.count_children()
    assert (counts.specs, counts.active, counts.supervisors, counts.workers) == (2, 2, 1, 1)
    sup.stop()


def test_every_step_is_counted_logged_and_passed_to_the_hook(
    journal: Journal, caplog: pytest.LogCaptureFixture
) -> None:
    events: list[Event] = []
    sup = Supervisor("root", [worker("a", journal)], on_event=events.append).start()
    with caplog.at_level("INFO", logger="supervisors"):
        ref_of(sup, "a").tell(Crash())
        journal.wait_until(lambda: journal.count("start", "a") == 2)
        sup.stop()
    names = [e.name for e in events]
    assert names == [
        "child_started",
        "child_exited",
        "child_restarted",
        "shutdown_step",
        "supervisor_stopped",
    ]
    exited = next(r for r in caplog.records if getattr(r, "event", None) == "child_exited")
    assert exited.child == "a" and exited.supervisor == "root"  # type: ignore[attr-defined]
    assert exited.reason == "RuntimeError: a crashed"  # type: ignore[attr-defined]
    assert exited.levelname == "WARNING"
    assert sup.stats()["child_restarted"] == 1


def test_a_restart_that_fails_to_start_counts_against_the_intensity(journal: Journal) -> None:
    attempts = []

    def flaky() -> pykka.ActorRef[Worker]:
        attempts.append(1)
        return Worker.start("f", journal, fail_on_start=len(attempts) > 1)

    sup = Supervisor("root", [ChildSpec("f", flaky)], intensity=2, period_seconds=60).start()
    ref_of(sup, "f").tell(Crash())
    reason = sup.wait(5)
    assert reason is not None and "gave up" in str(reason)
    assert len(attempts) == 3  # the first start, then two failed restarts


def test_an_actor_that_dies_answers_waiting_callers_with_a_definite_error(
    journal: Journal,
) -> None:
    sup = Supervisor("root", [worker("a", journal)], strategy=Strategy.ONE_FOR_ONE).start()
    ref = ref_of(sup, "a")
    sup.stop()
    with pytest.raises(pykka.ActorDeadError):
        ref.ask("ping", timeout=5)


def test_a_factory_handing_back_a_used_supervisor_is_a_clear_start_error() -> None:
    used = Supervisor("used", [])
    used.stop()
    sup = Supervisor("root", [ChildSpec("s", lambda: used, kind=ChildKind.SUPERVISOR)])
    with pytest.raises(StartError, match="child 's' failed to start: factory must make a new"):
        sup.start()
