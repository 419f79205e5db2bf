"""What a pull request's checks say (DESIGN 10): each check's state, the merge gate's
case, the base's red checks that closed, and a check red on the base too (inherited).
Pure: facts come in as arguments."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum


class CheckState(StrEnum):
    PENDING = "pending"
    PASS = "pass"
    FAIL = "fail"


@dataclass(frozen=True)
class CheckFact:
    """One check of a commit: a check run (by name) or a commit status (by context)."""

    name: str
    state: CheckState
    summary: str = ""


# check run conclusions GitHub documents; neutral and skipped do not hold a merge back
PASSING_CONCLUSIONS = frozenset({"success", "neutral", "skipped"})
FAILING_STATUSES = frozenset({"failure", "error"})


def check_run_state(status: str | None, conclusion: str | None) -> CheckState:
    if status != "completed":
        return CheckState.PENDING
    return CheckState.PASS if conclusion in PASSING_CONCLUSIONS else CheckState.FAIL


def status_state(state: str | None) -> CheckState:
    if state == "success":
        return CheckState.PASS
    if state in FAILING_STATUSES:
        return CheckState.FAIL
    return CheckState.PENDING


class Gate(StrEnum):
    """What a pull request's checks say (its head, and its base for a red one)."""

    NONE = "no checks"  # zero checks: they never open the gate
    PENDING = "pending"  # some still run: look again when they end
    GREEN = "green"  # every check passed
    RED = "red"  # a check failed that passes on the base: the work goes back
    INHERITED = "inherited"  # every red check is red on the base too: not the bee's fault


@dataclass(frozen=True)
class GateCase:
    gate: Gate
    red: tuple[CheckFact, ...] = ()  # RED: the bee's; INHERITED: the base's


def gate_case(head: Sequence[CheckFact], base_red: Iterable[str]) -> GateCase:
    """The case of a pull request whose head has the checks `head`, `base_red` the names
    of the checks red on its base. A red check is inherited only when the base says so:
    a check red on the head and green, pending or absent on the base is the bee's."""
    if not head:
        return GateCase(Gate.NONE)
    if any(c.state == CheckState.PENDING for c in head):
        return GateCase(Gate.PENDING)
    red = tuple(c for c in head if c.state == CheckState.FAIL)
    if not red:
        return GateCase(Gate.GREEN)
    on_base = set(base_red)
    own = tuple(c for c in red if c.name not in on_base)
    if own:
        return GateCase(Gate.RED, own)
    return GateCase(Gate.INHERITED, red)


def base_red_closes(open_red: Iterable[str], seen: Iterable[CheckFact]) -> tuple[str, ...]:
    """Which issues about a check red on the base may close: the names of `open_red`
    (the checks with such an issue open) that pass in `seen`, the base's own checks or
    those of work merged into it. A check still red, pending or absent from `seen` says
    nothing about the base: its issue stays open."""
    passing = {c.name for c in seen if c.state == CheckState.PASS}
    return tuple(sorted(name for name in set(open_red) if name in passing))


_INHERITED = "also red on {base}: not this work's fault\n"


def inherited_tail(base: str, summary: str) -> str:
    """The output kept for a check that is red on `base` too, headed for people as not
    the work's fault (the check's `inherited` column is what the gate reads)."""
    return _INHERITED.format(base=base) + summary
