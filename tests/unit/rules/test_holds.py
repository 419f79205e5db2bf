"""RULES 5 (holds): which files an order holds, and for how long."""

from hive.rules.holds import (
    AWAITING_REVIEW_HOLD_SECONDS,
    PH_AWAITING_REVIEW,
    PH_DONE,
    PH_ESCALATED,
    PH_RUNNING,
    PH_SENT_BACK,
    SENT_BACK_HOLD_SECONDS,
    HeldOrder,
    blocks_new_start,
    held_paths,
    holds_files,
    overlapping,
    paths_overlap,
)


def test_the_hold_lengths_are_30_and_120_minutes() -> None:
    assert AWAITING_REVIEW_HOLD_SECONDS == 30 * 60
    assert SENT_BACK_HOLD_SECONDS == 120 * 60


def test_a_running_order_holds_its_files() -> None:
    assert holds_files(PH_RUNNING, 0) is True
    assert holds_files(PH_RUNNING, 10**9) is True


def test_finished_work_awaiting_review_holds_for_30_minutes_after_its_finish() -> None:
    assert holds_files(PH_AWAITING_REVIEW, 1799) is True
    assert holds_files(PH_AWAITING_REVIEW, 1800) is False


def test_a_send_back_holds_for_120_minutes() -> None:
    assert holds_files(PH_SENT_BACK, 7199) is True
    assert holds_files(PH_SENT_BACK, 7200) is False


def test_escalated_and_done_hold_nothing() -> None:
    assert holds_files(PH_ESCALATED, 0) is False
    assert holds_files(PH_DONE, 0) is False


def test_nothing_new_starts_while_finished_work_waits_for_review() -> None:
    assert blocks_new_start(PH_AWAITING_REVIEW) is True
    for phase in (PH_RUNNING, PH_SENT_BACK, PH_ESCALATED, PH_DONE):
        assert blocks_new_start(phase) is False


def test_held_paths_gather_every_holding_order_but_the_askers_own() -> None:
    orders = [
        HeldOrder(1, ("a.py", "b.py"), PH_RUNNING),
        HeldOrder(2, ("c.py",), PH_AWAITING_REVIEW, since_finish_seconds=60),
        HeldOrder(3, ("d.py",), PH_SENT_BACK, since_finish_seconds=7200),
        HeldOrder(4, ("e.py",), PH_DONE),
    ]
    assert held_paths(orders) == {"a.py", "b.py", "c.py"}
    assert held_paths(orders, except_issue=1) == {"c.py"}


def test_paths_overlap_when_equal_or_one_contains_the_other() -> None:
    assert paths_overlap("src/a.py", "src/a.py") is True
    assert paths_overlap("src", "src/a.py") is True
    assert paths_overlap("src/a.py", "src") is True
    assert paths_overlap("src/a.py", "src/b.py") is False
    assert paths_overlap("src/a.py", "src/a.pyc") is False
    assert paths_overlap("sr", "src/a.py") is False


def test_overlapping_names_the_clashing_paths_sorted() -> None:
    assert overlapping(["z.py", "a.py", "b.py"], {"a.py", "z.py"}) == ("a.py", "z.py")
    assert overlapping(["a.py"], set()) == ()


def test_a_name_that_only_extends_another_is_no_overlap() -> None:
    assert paths_overlap("src/MAX", "src/MA") is False
    assert paths_overlap("src/MA", "src/MAX") is False
