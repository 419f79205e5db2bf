"""A bee's start gate: the bee commits before its ledger, its caller withdraws once it
gave up waiting; whichever comes first holds, and the other learns it lost."""

from __future__ import annotations

from hive.actors.bee.order import StartGate


def test_a_committed_start_cannot_be_withdrawn():
    gate = StartGate()
    assert gate.commit()
    assert not gate.withdraw() and not gate.withdrawn
    assert gate.commit()  # safe twice


def test_a_withdrawn_start_cannot_commit():
    gate = StartGate()
    assert gate.withdraw() and gate.withdrawn
    assert not gate.commit()
    assert gate.withdraw() and gate.withdrawn
