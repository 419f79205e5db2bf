import pytest

from supervisors import (
    BRUTAL_KILL,
    DEFAULT_WORKER_SHUTDOWN_SECONDS,
    INFINITY,
    ChildKind,
    ChildSpec,
    Restart,
    SpecError,
    Supervisor,
)
from supervisors.intensity import RestartIntensity
from supervisors.strategies import Strategy, plan


def _noop() -> None:
    return None


def test_worker_shutdown_defaults_to_five_seconds_and_supervisor_to_infinity() -> None:
    assert ChildSpec("w", _noop).shutdown == DEFAULT_WORKER_SHUTDOWN_SECONDS
    assert ChildSpec("s", _noop, kind=ChildKind.SUPERVISOR).shutdown == INFINITY
    assert ChildSpec("b", _noop, shutdown=BRUTAL_KILL).shutdown_seconds is None
    assert ChildSpec("w", _noop).restart is Restart.PERMANENT


@pytest.mark.parametrize("bad", [0, -1, "5", True])
def test_bad_shutdown_is_a_one_line_error_naming_the_child(bad: object) -> None:
    with pytest.raises(SpecError, match=r"child 'w': shutdown must be") as err:
        ChildSpec("w", _noop, shutdown=bad)  # type: ignore[arg-type]
    assert "\n" not in str(err.value)


def test_empty_id_and_uncallable_start_are_refused() -> None:
    with pytest.raises(SpecError, match="non-empty string"):
        ChildSpec("", _noop)
    with pytest.raises(SpecError, match="start must be callable"):
        ChildSpec("w", "not a factory")  # type: ignore[arg-type]
    with pytest.raises(SpecError, match="restart must be a Restart"):
        ChildSpec("w", _noop, restart="permanent")  # type: ignore[arg-type]


def test_duplicate_child_ids_are_refused() -> None:
    with pytest.raises(SpecError, match="duplicate child id 'a'"):
        Supervisor("root", [ChildSpec("a", _noop), ChildSpec("a", _noop)])


def test_one_for_one_restarts_only_the_child() -> None:
    assert plan(Strategy.ONE_FOR_ONE, ["a", "b", "c"], "b").start == ("b",)
    assert plan(Strategy.ONE_FOR_ONE, ["a", "b", "c"], "b").stop == ()


def test_one_for_all_stops_the_others_in_reverse_and_starts_all_in_order() -> None:
    p = plan(Strategy.ONE_FOR_ALL, ["a", "b", "c", "d"], "b")
    assert p.stop == ("d", "c", "a")
    assert p.start == ("a", "b", "c", "d")


def test_rest_for_one_stops_the_later_ones_in_reverse_and_starts_from_the_child() -> None:
    p = plan(Strategy.REST_FOR_ONE, ["a", "b", "c", "d"], "b")
    assert p.stop == ("d", "c")
    assert p.start == ("b", "c", "d")


def test_plan_refuses_an_unknown_child() -> None:
    with pytest.raises(ValueError, match="'x' is not a child"):
        plan(Strategy.ONE_FOR_ONE, ["a"], "x")


def test_intensity_allows_one_restart_in_five_seconds_by_default() -> None:
    now = [0.0]
    intensity = RestartIntensity(clock=lambda: now[0])
    assert intensity.allow()
    now[0] = 4.9
    assert not intensity.allow()


def test_intensity_forgets_restarts_older_than_the_period() -> None:
    now = [0.0]
    intensity = RestartIntensity(2, 5.0, clock=lambda: now[0])
    assert intensity.allow() and intensity.allow()
    now[0] = 5.0
    assert intensity.allow()
    assert intensity.allow()
    assert not intensity.allow()


@pytest.mark.parametrize(("i", "p"), [(-1, 5.0), (1, 0), (1.5, 5.0)])
def test_intensity_refuses_bad_numbers(i: object, p: object) -> None:
    with pytest.raises(ValueError, match="must be"):
        RestartIntensity(i, p)  # type: ignore[arg-type]
