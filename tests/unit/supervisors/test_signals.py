"""The signal bridge in this process: drain hooks, ordered stop, hard stop, handlers."""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator

import pytest

from supervisors import ChildSpec, ExitReason, SignalBridge, Supervisor, exit_code, run

from .helpers import DEADLINE_SECONDS, Block, Journal, Worker, ref_of, worker


@pytest.fixture
def tree(journal: Journal) -> Iterator[Supervisor]:
    root = Supervisor("root", [worker("a", journal), worker("b", journal)])
    yield root
    root.stop(timeout=DEADLINE_SECONDS)


def test_the_drain_hook_runs_while_the_tree_keeps_running_then_the_ordered_stop(
    tree: Supervisor, journal: Journal
) -> None:
    tree.start()
    bridge = SignalBridge(tree)
    entered, go = threading.Event(), threading.Event()
    answers: list[object] = []

    def drain(signum: int) -> None:
        entered.set()
        answers.append(ref_of(tree, "a").ask("ping", timeout=DEADLINE_SECONDS))
        go.wait()

    bridge.add_drain_hook(drain)
    bridge.request_stop(signal.SIGTERM)
    assert entered.wait(DEADLINE_SECONDS)
    assert tree.alive and journal.of("stop") == []
    go.set()
    reason = tree.wait(DEADLINE_SECONDS)
    assert reason is not None and reason.normal and "SIGTERM" in str(reason)
    assert answers == [None]
    assert journal.of("stop") == ["b", "a"]


def test_a_second_signal_during_the_drain_is_a_hard_stop(
    tree: Supervisor, journal: Journal, release: threading.Event
) -> None:
    tree.start()
    ref_of(tree, "a").tell(Block(release))
    bridge = SignalBridge(tree)
    entered = threading.Event()

    def hold(signum: int) -> None:
        entered.set()
        release.wait()

    bridge.add_drain_hook(hold)
    bridge.request_stop(signal.SIGTERM)
    assert entered.wait(DEADLINE_SECONDS)
    bridge.request_stop(signal.SIGTERM)
    reason = tree.wait(DEADLINE_SECONDS)
    assert reason is not None and not reason.normal
    assert exit_code(reason) == 128 + signal.SIGTERM
    assert sorted(journal.of("kill")) == ["a", "b"]


def test_a_removed_drain_hook_does_not_run(tree: Supervisor) -> None:
    tree.start()
    bridge = SignalBridge(tree)
    ran: list[int] = []
    remove = bridge.add_drain_hook(ran.append)
    remove()
    remove()
    bridge.request_stop()
    assert tree.wait(DEADLINE_SECONDS) is not None
    assert ran == []


def test_a_real_sigterm_reaches_the_root_and_the_handlers_come_back(tree: Supervisor) -> None:
    before = signal.getsignal(signal.SIGTERM)
    tree.start()
    with SignalBridge(tree) as bridge:
        assert signal.getsignal(signal.SIGTERM) != before
        os.kill(os.getpid(), signal.SIGTERM)
        reason = tree.wait(DEADLINE_SECONDS)
        assert bridge.signum == signal.SIGTERM
    assert reason is not None and reason.normal
    assert signal.getsignal(signal.SIGTERM) == before


def test_run_reports_a_failed_start_as_an_abnormal_reason(journal: Journal) -> None:
    root = Supervisor("root", [worker("a", journal, fail_on_start=True)])
    reason = run(root)
    assert not reason.normal and "child 'a' failed to start" in str(reason)
    assert exit_code(reason) == 1
    assert exit_code(ExitReason.shutdown()) == 0


def test_install_needs_a_root() -> None:
    with pytest.raises(ValueError, match="needs the root supervisor"):
        SignalBridge().install()


def test_a_drain_hook_that_raises_does_not_stop_the_ordered_stop(
    tree: Supervisor, journal: Journal
) -> None:
    tree.start()
    bridge = SignalBridge(tree)

    def broken(signum: int) -> None:
        raise RuntimeError("drain failed")

    bridge.add_drain_hook(broken)
    bridge.request_stop(signal.SIGTERM)
    reason = tree.wait(DEADLINE_SECONDS)
    assert reason is not None and reason.normal
    assert journal.of("stop") == ["b", "a"]


def test_run_returns_the_reason_of_an_orderly_stop_and_restores_the_handlers(
    journal: Journal,
) -> None:
    before = signal.getsignal(signal.SIGINT)
    root = Supervisor("root", [worker("a", journal)])
    bridge = SignalBridge()

    def stop_once_running() -> None:
        journal.wait_until(lambda: root.alive)
        bridge.request_stop()

    stopper = threading.Thread(target=stop_once_running)
    stopper.start()
    reason = run(root, bridge)
    stopper.join(DEADLINE_SECONDS)
    assert reason.normal and exit_code(reason) == 0
    assert journal.of("stop") == ["a"]
    assert signal.getsignal(signal.SIGINT) == before


def test_a_signal_while_the_tree_starts_drains_once_every_child_started(
    journal: Journal,
) -> None:
    # the drain hook is added by the last child's start (as the hive's DrainActor does):
    # a signal that comes while an earlier child is still starting must not skip it
    bridge = SignalBridge()
    first_started, go_on = threading.Event(), threading.Event()
    drained: list[int] = []

    def slow_start() -> object:
        first_started.set()
        assert go_on.wait(DEADLINE_SECONDS)
        return Worker.start("slow", journal)

    def hooking_start() -> object:
        bridge.add_drain_hook(drained.append)
        return Worker.start("hooking", journal)

    root = Supervisor("root", [ChildSpec("slow", slow_start), ChildSpec("hooking", hooking_start)])

    def signal_during_the_start() -> None:
        assert first_started.wait(DEADLINE_SECONDS)
        bridge.request_stop(signal.SIGTERM)
        go_on.set()

    signaller = threading.Thread(target=signal_during_the_start)
    signaller.start()
    reason = run(root, bridge)  # the main thread, as `hive serve` runs it
    signaller.join(DEADLINE_SECONDS)
    assert reason.normal, reason
    assert drained == [signal.SIGTERM]
    assert journal.of("stop") == ["hooking", "slow"]
