"""Whatever crashes, in whatever order, no child runs once the root has stopped."""

from __future__ import annotations

import contextlib
from typing import Any

import pykka
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from supervisors import ChildKind, ChildSpec, Restart, Strategy, Supervisor

from .helpers import DEADLINE_SECONDS, Crash, Journal, Quit, worker

_restarts = st.sampled_from(list(Restart))
_strategies = st.sampled_from([Strategy.ONE_FOR_ONE, Strategy.ONE_FOR_ALL, Strategy.REST_FOR_ONE])
_ops = st.lists(
    st.tuples(st.sampled_from(["crash", "quit"]), st.integers(0, 50)), min_size=1, max_size=8
)


def _leaves(sup: Supervisor) -> list[pykka.ActorRef[Any]]:
    refs: list[pykka.ActorRef[Any]] = []
    for row in sup.which_children():
        if isinstance(row.target, Supervisor):
            refs.extend(_leaves(row.target))
        elif row.target is not None:
            refs.append(row.target)
    return refs


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    root_strategy=_strategies,
    inner_strategy=_strategies,
    restarts=st.lists(_restarts, min_size=4, max_size=4),
    intensity=st.integers(0, 3),
    ops=_ops,
)
def test_no_child_runs_after_the_root_stops(
    root_strategy: Strategy,
    inner_strategy: Strategy,
    restarts: list[Restart],
    intensity: int,
    ops: list[tuple[str, int]],
) -> None:
    journal = Journal()

    def inner() -> Supervisor:
        kids = [worker("x", journal, restarts[2]), worker("y", journal, restarts[3])]
        return Supervisor("inner", kids, strategy=inner_strategy, intensity=intensity)

    root = Supervisor(
        "root",
        [
            worker("a", journal, restarts[0]),
            ChildSpec("inner", inner, kind=ChildKind.SUPERVISOR),
            worker("b", journal, restarts[1]),
        ],
        strategy=root_strategy,
        intensity=intensity,
    ).start()
    for op, index in ops:
        leaves = _leaves(root)
        if not leaves:
            break
        # it may die meanwhile: that is one of the sequences too
        with contextlib.suppress(pykka.ActorDeadError):
            leaves[index % len(leaves)].tell(Crash() if op == "crash" else Quit())
    reason = root.stop(timeout=DEADLINE_SECONDS)
    assert reason is not None, "the root did not stop in time"
    assert reason.normal or "gave up" in str(reason)
    running = [a for a in journal.actors if not a.supervisor_exit.is_set()]
    assert running == [], f"still running after the root stopped: {running}"
