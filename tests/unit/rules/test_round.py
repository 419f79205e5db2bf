"""A Queen round's plan from its facts, and the report's sentences, as vectors (no store)."""

from hive.rules.holds import PH_RUNNING, PH_SENT_BACK, HeldOrder
from hive.rules.outcome_codes import OutcomeCode
from hive.rules.priority import Candidate, Skip, Skipped
from hive.rules.round import (
    BackingOff,
    KeysBusy,
    KeysResting,
    LastEnd,
    Limits,
    NoMemory,
    NotATask,
    NotStarted,
    Plan,
    Planned,
    RoundFacts,
    Stop,
    WorkersFull,
    backing_off,
    plan_round,
    render,
    room_for_bees,
)
from hive.rules.states import (
    ACCEPT,
    EMPTY,
    ENDED,
    ESCALATE,
    ILLEGAL,
    REAPED,
    REFUSED,
    RELEASED,
    RUNNING,
    SENDBACK,
    STALE,
    WAIT,
)

ELSEWHERE = Limits(max_workers=4, elsewhere=True)


def task(number: int, *paths: str, **fields) -> Candidate:
    return Candidate(number, boundary=paths or (f"src/{number}.py",), **fields)


def facts(*candidates: Candidate, **fields) -> RoundFacts:
    return RoundFacts(fields.pop("limits", ELSEWHERE), candidates=candidates, **fields)


def test_one_order_per_free_key_then_every_key_is_busy() -> None:
    plan = plan_round(facts(task(1), task(2), task(3), keys=(0, 1)))
    assert plan.orders == (Planned(1, 0), Planned(2, 1))
    assert plan.refusal == KeysBusy((0, 1), 1)
    assert render(plan.refusal) == (
        "every key is busy (2 keys x 1 lanes): add HIVE_WORKER_KEY_3 to run more bees at once"
    )
    assert plan.skipped == () and not plan.needs_you


def test_nothing_to_do_is_an_empty_plan() -> None:
    assert plan_round(facts(keys=(0,))) == Plan()


def test_the_key_scan_starts_after_the_last_key_and_takes_the_least_busy() -> None:
    assert plan_round(facts(task(1), keys=(0, 1), last_key=0)).orders == (Planned(1, 1),)
    lanes = Limits(max_workers=4, lanes_per_key=2, elsewhere=True)
    plan = plan_round(facts(task(1), task(2), keys=(0, 1), busy={0: 1}, limits=lanes))
    assert plan.orders == (Planned(1, 1), Planned(2, 0))
    # among equally busy keys, each order's key moves the scan on
    even = {1: 1, 2: 1}
    plan = plan_round(facts(task(1), task(2), keys=(0, 1, 2), busy=even, limits=lanes))
    assert plan.orders == (Planned(1, 0), Planned(2, 1))


def test_a_hive_with_no_key_refuses_and_needs_a_person() -> None:
    plan = plan_round(facts(task(1)))
    assert plan.orders == () and plan.refusal == KeysBusy((), 1) and plan.needs_you
    assert render(plan.refusal) == "no worker key is set: set HIVE_WORKER_KEY to run a bee"


def test_an_issue_that_is_not_a_task_comes_first_in_the_report_and_needs_a_person() -> None:
    plan = plan_round(
        facts(task(2), task(3, open_blocker=True), keys=(0,), not_tasks=((1, "no boundary: x"),))
    )
    assert plan.orders == (Planned(2, 0),)
    assert plan.skipped == (NotATask(1, "no boundary: x"), Skipped(3, Skip.OPEN_BLOCKER))
    assert plan.needs_you
    assert [render(s) for s in plan.skipped] == ["no boundary: x", "skipped: an open blocker"]


def test_a_live_order_work_awaiting_review_and_accepted_work_are_not_news() -> None:
    quiet = (task(1, state=RUNNING), task(2, state=ENDED), task(4, state=WAIT))
    plan = plan_round(facts(*quiet, task(5, state=ACCEPT), task(3), keys=(0,)))
    assert plan.orders == (Planned(3, 0),) and plan.skipped == () and not plan.needs_you


def test_sent_back_stale_reaped_refused_and_released_work_goes_again() -> None:
    again = (SENDBACK, STALE, REAPED, REFUSED, RELEASED)
    plan = plan_round(facts(*(task(n, state=s) for n, s in enumerate(again, 1)), keys=(0,)))
    assert [p.number for p in plan.orders] == [1]
    limits = Limits(max_workers=8, lanes_per_key=8, elsewhere=True)
    plan = plan_round(
        facts(*(task(n, state=s) for n, s in enumerate(again, 1)), keys=(0,), limits=limits)
    )
    assert [p.number for p in plan.orders] == [1, 2, 3, 4, 5]
    assert plan.skipped == () and not plan.needs_you


def test_a_sent_back_issue_takes_up_the_files_its_last_attempt_holds_but_no_other_does() -> None:
    held = (HeldOrder(1, ("src/a.py",), PH_SENT_BACK, since_finish_seconds=60),)
    plan = plan_round(
        facts(task(1, "src/a.py", state=SENDBACK), task(2, "src/a.py"), keys=(0, 1), held=held)
    )
    assert plan.orders == (Planned(1, 0),)
    assert plan.skipped == (Skipped(2, Skip.HELD, ("src/a.py",)),)


def test_reaped_work_still_backs_off_after_failures() -> None:
    failed = {1: LastEnd(1, OutcomeCode.REAPED_AT_BOOT, 20.0, "reaped at boot")}
    plan = plan_round(facts(task(1, state=REAPED), keys=(0,), last_ends=failed))
    assert plan.orders == () and plan.skipped == (BackingOff(1, 2, 20.0, "reaped at boot"),)


def test_escalated_work_is_named_once_as_needing_a_person() -> None:
    note = "sent back 2 times and still unmet:\n- file `a` contains `b`: no"
    plan = plan_round(facts(task(6, state=ESCALATE, review_note=note), task(7), keys=(0,)))
    assert plan.orders == (Planned(7, 0),)
    assert plan.skipped == (Skipped(6, Skip.ESCALATED, note="sent back 2 times and still unmet"),)
    assert plan.needs_you
    assert render(plan.skipped[0]) == (
        "needs a person: sent back 2 times and still unmet;"
        " hive approve 6 / hive reject 6 --note ..."
    )


def test_empty_work_waits_for_its_floor_and_says_so_without_needing_a_person() -> None:
    plan = plan_round(facts(task(8, state=EMPTY), keys=(0,)))
    assert plan.orders == () and plan.skipped == (Skipped(8, Skip.EMPTY),)
    assert not plan.needs_you
    assert render(plan.skipped[0]) == (
        "skipped: its last attempt committed nothing; it goes again once 30 min have passed"
        " since its review"
    )


def test_a_row_in_no_known_state_is_not_dispatched_over_and_needs_a_person() -> None:
    plan = plan_round(facts(task(9, state=ILLEGAL), keys=(0,)))
    assert plan.orders == () and plan.skipped == (Skipped(9, Skip.UNKNOWN_STATE),)
    assert plan.needs_you


def test_files_another_order_holds_are_skipped_naming_them() -> None:
    held = (HeldOrder(9, ("src/a.py",), PH_RUNNING),)
    plan = plan_round(facts(task(1, "src/a.py", "src/b.py"), keys=(0,), held=held))
    assert plan.orders == ()
    assert plan.skipped == (Skipped(1, Skip.HELD, ("src/a.py",)),)
    assert render(plan.skipped[0]) == (
        "skipped: its boundary overlaps files another order holds: src/a.py"
    )


def test_two_issues_on_one_file_never_go_in_one_round() -> None:
    plan = plan_round(facts(task(1, "src/a.py"), task(2, "src/b.py", "src/a.py"), keys=(0, 1)))
    assert plan.orders == (Planned(1, 0),)
    assert plan.skipped == (Skipped(2, Skip.HELD, ("src/a.py",)),)
    assert plan.refusal is None and not plan.needs_you


def test_an_issue_backing_off_is_skipped_with_its_wait_then_goes() -> None:
    failed = {
        1: LastEnd(1, OutcomeCode.ENDED_BADLY, 20.0, "ended badly")
    }  # the second failure in a row: 60 s
    plan = plan_round(facts(task(1), task(2), keys=(0, 1), last_ends=failed))
    assert plan.orders == (Planned(2, 0),)
    assert plan.skipped == (BackingOff(1, 2, 20.0, "ended badly"),)
    assert render(plan.skipped[0]) == (
        "waits 40 s more: its last 2 attempts failed (the last: ended badly)"
    )
    later = {1: LastEnd(1, OutcomeCode.ENDED_BADLY, 60.0, "ended badly")}
    assert plan_round(facts(task(1), keys=(0,), last_ends=later)).orders == (Planned(1, 0),)


def test_only_failures_back_off() -> None:
    ends = {
        1: LastEnd(
            0, OutcomeCode.ENDED_BADLY, 0.0, "ended badly"
        ),  # the first failure goes again at once
        2: LastEnd(5, OutcomeCode.HANDED_BACK, 0.0, "handed back"),
        3: LastEnd(1, None, 0.0),
        4: LastEnd(
            2, OutcomeCode.REAPED_NO_COMPLETION, 119.0, "reaped: no completion within 120 minutes"
        ),
    }
    assert backing_off(ends) == {
        4: BackingOff(4, 3, 119.0, "reaped: no completion within 120 minutes")
    }
    assert backing_off({5: LastEnd(1, None, 0.0)}) == {}


def test_max_workers_bounds_the_round_with_a_sentence() -> None:
    limits = Limits(max_workers=2, elsewhere=True)
    plan = plan_round(facts(task(1), task(2), keys=(0, 1), in_flight=1, limits=limits))
    assert plan.orders == (Planned(1, 0),)
    assert plan.refusal == WorkersFull(2, 2)
    assert render(plan.refusal) == "2 orders in flight: HIVE_MAX_WORKERS=2 reached"


def test_no_room_in_this_process_says_why() -> None:
    here = Limits(max_workers=4, bee_memory_mb=1024)
    not_ready = plan_round(facts(task(1), keys=(0,), host_ready=False, limits=here))
    assert not_ready.orders == () and not_ready.refusal is Stop.HOST_NOT_READY
    assert render(Stop.HOST_NOT_READY) == (
        "no bee can start in this process now (no bee pool, or draining)"
    )
    short = plan_round(facts(task(1), task(2), keys=(0, 1), free_memory_mb=2047, limits=here))
    assert short.orders == (Planned(1, 0),) and short.refusal == NoMemory(1024)
    assert render(short.refusal) == (
        "not enough free memory here for another bee (HIVE_BEE_MEMORY_MB=1024)"
    )


def test_the_room_for_bees_is_bounded_only_here_and_only_when_measured() -> None:
    here = Limits(max_workers=4, bee_memory_mb=512)
    assert room_for_bees(RoundFacts(here, free_memory_mb=2047)) == 3
    assert room_for_bees(RoundFacts(here, free_memory_mb=None)) is None
    assert room_for_bees(RoundFacts(here, free_memory_mb=2047, host_ready=False)) == 0
    assert room_for_bees(RoundFacts(Limits(4), free_memory_mb=10)) is None  # unchecked
    assert room_for_bees(RoundFacts(ELSEWHERE, free_memory_mb=0, host_ready=False)) is None


def test_a_resting_key_is_passed_over_and_named_when_no_other_is_free() -> None:
    plan = plan_round(facts(task(1), task(2), keys=(0, 1), resting={0: 5}))
    assert plan.orders == (Planned(1, 1),)
    assert plan.refusal == KeysResting(((0, 5),))
    none_free = plan_round(facts(task(1), keys=(0, 1), resting={1: 300, 0: 4}))
    assert none_free.orders == () and none_free.refusal == KeysResting(((0, 4), (1, 300)))
    assert render(none_free.refusal) == (
        "every free key rests after its provider refused a turn: key 0 for 4 s, key 1 for 300 s"
    )


def test_with_no_free_lane_left_the_capacity_refusal_names_the_keys() -> None:
    limits = Limits(max_workers=1, elsewhere=True)
    plan = plan_round(facts(task(1), task(2), keys=(0,), limits=limits))
    assert plan.orders == (Planned(1, 0),) and plan.refusal == KeysBusy((0,), 1)


def test_a_lease_gone_and_an_order_not_started_read_as_sentences() -> None:
    assert render(Stop.LEASE_GONE) == (
        "the Queen lease is gone (another Queen took it, or it ran out): the order was not"
        " written and this round dispatches nothing more"
    )
    assert render(NotStarted(4, "could not start: boom")) == "#4 not started: could not start: boom"


def test_every_priority_skip_has_its_sentence() -> None:
    assert [render(Skipped(1, why)) for why in Skip] == [
        "skipped: an open blocker",
        "skipped: it already has a live order",
        "skipped: already accepted",
        "skipped: its finished work waits for review",
        "skipped: no boundary",
        "skipped: its boundary overlaps files another order holds: ",
        "needs a person: the review escalated it; hive approve 1 / hive reject 1 --note ...",
        "skipped: its last attempt committed nothing; it goes again once 30 min have passed"
        " since its review",
        "skipped: its order's review_state is none the hive knows; a person looks at the row",
    ]
