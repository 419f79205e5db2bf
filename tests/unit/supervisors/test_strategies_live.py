"""Each strategy restarts exactly the children it should, in the right order."""

from __future__ import annotations

from supervisors import Restart, Strategy, Supervisor

from .helpers import Crash, Journal, Quit, ref_of, worker


def _tree(journal: Journal, strategy: Strategy, **kw: object) -> Supervisor:
    children = [worker(n, journal) for n in ("a", "b", "c", "d")]
    return Supervisor("root", children, strategy=strategy, **kw).start()  # type: ignore[arg-type]


def test_children_start_in_order_and_stop_in_reverse(journal: Journal) -> None:
    sup = _tree(journal, Strategy.ONE_FOR_ONE)
    assert journal.of("start") == ["a", "b", "c", "d"]
    assert sup.stop() is not None
    assert journal.of("stop") == ["d", "c", "b", "a"]


def test_one_for_one_restarts_only_the_crashed_child(journal: Journal) -> None:
    sup = _tree(journal, Strategy.ONE_FOR_ONE)
    mark = journal.mark()
    ref_of(sup, "b").tell(Crash())
    journal.wait_until(lambda: journal.since(mark, "start") == ["b"])
    journal.wait_until(lambda: sup.count_children().active == 4)
    assert journal.since(mark, "stop") == []
    sup.stop()


def test_one_for_all_stops_the_others_in_reverse_and_restarts_all_in_order(
    journal: Journal,
) -> None:
    sup = _tree(journal, Strategy.ONE_FOR_ALL)
    mark = journal.mark()
    ref_of(sup, "b").tell(Crash())
    journal.wait_until(lambda: len(journal.since(mark, "start")) == 4)
    assert journal.since(mark, "stop") == ["d", "c", "a"]
    assert journal.since(mark, "start") == ["a", "b", "c", "d"]
    sup.stop()


def test_rest_for_one_restarts_the_child_and_those_started_after_it(journal: Journal) -> None:
    sup = _tree(journal, Strategy.REST_FOR_ONE)
    mark = journal.mark()
    ref_of(sup, "b").tell(Crash())
    journal.wait_until(lambda: len(journal.since(mark, "start")) == 3)
    assert journal.since(mark, "stop") == ["d", "c"]
    assert journal.since(mark, "start") == ["b", "c", "d"]
    sup.stop()


def test_transient_child_is_restarted_after_a_crash_but_not_after_a_normal_exit(
    journal: Journal,
) -> None:
    sup = Supervisor("root", [worker("t", journal, Restart.TRANSIENT)], intensity=5).start()
    ref_of(sup, "t").tell(Crash())
    journal.wait_until(lambda: sup.stats().get("child_restarted") == 1)
    ref_of(sup, "t").tell(Quit())
    journal.wait_until(lambda: journal.count("stop", "t") == 1)
    journal.wait_until(lambda: sup.count_children().active == 0)
    assert journal.count("start", "t") == 2
    assert [row.running for row in sup.which_children()] == [False]
    sup.stop()


def test_temporary_child_is_never_restarted_and_is_forgotten(journal: Journal) -> None:
    sup = Supervisor("root", [worker("a", journal), worker("t", journal, Restart.TEMPORARY)])
    sup.start()
    ref_of(sup, "t").tell(Crash())
    journal.wait_until(lambda: [r.id for r in sup.which_children()] == ["a"])
    assert journal.count("start", "t") == 1
    sup.stop()


def test_temporary_child_taken_down_by_a_sibling_is_not_restarted(journal: Journal) -> None:
    children = [worker("a", journal), worker("t", journal, Restart.TEMPORARY)]
    sup = Supervisor("root", children, strategy=Strategy.ONE_FOR_ALL).start()
    mark = journal.mark()
    ref_of(sup, "a").tell(Crash())
    journal.wait_until(lambda: journal.since(mark, "start") == ["a"])
    assert journal.since(mark, "stop") == ["t"]
    assert [r.id for r in sup.which_children()] == ["a"]
    sup.stop()
    assert journal.count("start", "t") == 1


def test_permanent_child_is_restarted_after_a_normal_exit(journal: Journal) -> None:
    sup = Supervisor("root", [worker("p", journal)]).start()
    ref_of(sup, "p").tell(Quit())
    journal.wait_until(lambda: journal.count("start", "p") == 2)
    sup.stop()
