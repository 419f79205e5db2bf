"""A stop signal to `hive chaos` raises `Interrupted` in the main thread, once; while the
run holds the signals (a process started and noted, the ending) it is raised after."""

from __future__ import annotations

import os
import signal
import threading

import pytest

from hive.chaos import interrupt
from hive.chaos.interrupt import Interrupted


def _signalled(signum: int) -> None:
    """Send `signum` to this process and let its handler run (it runs in the main thread
    between two bytecodes, which the event's wait gives)."""
    os.kill(os.getpid(), signum)
    threading.Event().wait(0.05)


def test_a_sigterm_raises_interrupted_naming_it() -> None:
    with pytest.raises(Interrupted) as stopped, interrupt.installed():
        _signalled(signal.SIGTERM)
    assert stopped.value.signum == signal.SIGTERM and stopped.value.name == "SIGTERM"


def test_a_signal_while_held_is_raised_once_the_hold_ends() -> None:
    done = []
    with pytest.raises(Interrupted) as stopped, interrupt.installed(), interrupt.held():
        _signalled(signal.SIGINT)
        done.append("the held work ran whole")
        _signalled(signal.SIGTERM)  # a second signal while stopping: ignored
        done.append("and on")
    assert done == ["the held work ran whole", "and on"]
    assert stopped.value.signum == signal.SIGINT


def test_the_handlers_before_are_put_back() -> None:
    before = signal.getsignal(signal.SIGTERM)
    with interrupt.installed():
        assert signal.getsignal(signal.SIGTERM) is not before
    assert signal.getsignal(signal.SIGTERM) is before


def test_without_the_handlers_a_hold_holds_nothing() -> None:
    with interrupt.held():
        pass  # no handler installed: nothing to hold, nothing raised
