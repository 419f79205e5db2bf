"""RULES 5 (priority): levels, labels, aging, the critical cap, the order and the skips."""

from hive.rules.holds import PH_RUNNING, PH_SENT_BACK, HeldOrder
from hive.rules.lifecycle import may_replace
from hive.rules.priority import (
    AGING_DAYS,
    AGING_SECONDS,
    CRITICAL,
    CRITICAL_CAP,
    HIGH,
    LEVEL_NAMES,
    LOW,
    MAX_AGING_STEPS,
    NORMAL,
    Candidate,
    Ranked,
    Skip,
    Skipped,
    aged_level,
    capacity,
    label_level,
    order_candidates,
    rank,
    skip_reason,
)
from hive.rules.states import (
    ACCEPT,
    EMPTY,
    ENDED,
    ESCALATE,
    ILLEGAL,
    NONE,
    RUNNING,
    SENDBACK,
    WAIT,
    State,
)

OLD = AGING_SECONDS


def test_the_levels_and_constants_are_pinned() -> None:
    assert (CRITICAL, HIGH, NORMAL, LOW) == (0, 1, 2, 3)
    assert LEVEL_NAMES[LOW] == "low"
    assert CRITICAL_CAP == 3
    assert (AGING_DAYS, MAX_AGING_STEPS) == (14, 1)
    assert AGING_SECONDS == 14 * 86400


def test_each_label_names_its_level() -> None:
    for label in ("P0", "priority/critical", "critical"):
        assert label_level([label]) == CRITICAL
    for label in ("P1", "priority/high", "high-priority"):
        assert label_level([label]) == HIGH
    for label in ("P2", "priority/medium"):
        assert label_level([label]) == NORMAL
    for label in ("P3", "P4", "priority/low"):
        assert label_level([label]) == LOW


def test_no_priority_label_means_none_and_the_most_urgent_label_wins() -> None:
    assert label_level([]) is None
    assert label_level(["bug", "p0"]) is None  # labels are matched exactly
    assert label_level(["P3", "bug", "P1"]) == HIGH


def test_a_labelled_normal_or_low_issue_gains_one_level_after_14_days() -> None:
    assert aged_level(NORMAL, OLD - 1) == (NORMAL, False)
    assert aged_level(NORMAL, OLD) == (HIGH, True)
    assert aged_level(LOW, OLD) == (NORMAL, True)
    assert aged_level(LOW, OLD * 10) == (NORMAL, True)  # one step at most


def test_aging_never_reaches_critical_and_an_unlabelled_issue_never_ages() -> None:
    assert aged_level(HIGH, OLD * 10) == (HIGH, False)
    assert aged_level(CRITICAL, OLD) == (CRITICAL, False)
    assert aged_level(None, OLD * 10) == (NORMAL, False)


def test_the_order_is_level_then_real_before_aged_then_listing_order() -> None:
    ranked = rank(
        [
            Candidate(5, ("P3",)),
            Candidate(4, ("P2",), age_seconds=OLD),  # aged into HIGH
            Candidate(3, ("P1",)),
            Candidate(2),
            Candidate(1, ("P0",)),
            Candidate(6, ("P1",)),
        ]
    )
    assert ranked == [
        Ranked(1, CRITICAL, False),
        Ranked(3, HIGH, False),
        Ranked(6, HIGH, False),
        Ranked(4, HIGH, True),
        Ranked(2, NORMAL, False),
        Ranked(5, LOW, False),
    ]


def test_a_fourth_critical_runs_as_high_in_listing_order() -> None:
    ranked = rank([Candidate(n, ("P0",)) for n in (9, 3, 7, 1, 5)])
    assert [(r.number, r.level) for r in ranked] == [
        (1, CRITICAL),
        (3, CRITICAL),
        (5, CRITICAL),
        (7, HIGH),
        (9, HIGH),
    ]


def test_criticals_already_running_count_against_the_cap() -> None:
    ranked = rank([Candidate(n, ("P0",)) for n in (1, 2, 3)], running_critical=2)
    assert [r.level for r in ranked] == [CRITICAL, HIGH, HIGH]
    ranked = rank([Candidate(1, ("P0",))], running_critical=5)
    assert [r.level for r in ranked] == [HIGH]


def test_a_demoted_critical_ranks_ahead_of_an_aged_high() -> None:
    ranked = rank([Candidate(n, ("P0",)) for n in (1, 2, 3, 4)] + [Candidate(0, ("P2",), OLD)])
    assert [r.number for r in ranked] == [1, 2, 3, 4, 0]


def test_a_candidate_is_skipped_for_a_blocker_its_order_state_or_no_boundary():
    base = Candidate(1, boundary=("a.py",))
    assert skip_reason(base, set()) is None
    blocked = Candidate(1, boundary=("a.py",), open_blocker=True)
    assert skip_reason(blocked, set()) == Skipped(1, Skip.OPEN_BLOCKER)
    by_state = {
        RUNNING: Skip.LIVE_ORDER,
        ENDED: Skip.AWAITING_REVIEW,
        WAIT: Skip.AWAITING_REVIEW,
        ACCEPT: Skip.ACCEPTED,
        EMPTY: Skip.EMPTY,
        ILLEGAL: Skip.UNKNOWN_STATE,
    }
    for state, why in by_state.items():
        assert skip_reason(Candidate(1, boundary=("a.py",), state=state), set()) == (
            Skipped(1, why)
        )
    assert skip_reason(Candidate(1), set()) == Skipped(1, Skip.NO_BOUNDARY)
    # the first reason wins: a blocked issue with a live order is skipped for its blocker
    both = Candidate(1, boundary=("a.py",), open_blocker=True, state=RUNNING)
    assert skip_reason(both, {"a.py"}) == Skipped(1, Skip.OPEN_BLOCKER)


def test_an_escalated_candidate_is_named_first_with_its_notes_first_line() -> None:
    note = "\nsent back 2 times and still unmet:\n- file `a.py` contains `x`: no"
    escalated = Candidate(1, open_blocker=True, state=ESCALATE, review_note=note)
    assert skip_reason(escalated, {"a.py"}) == (
        Skipped(1, Skip.ESCALATED, note="sent back 2 times and still unmet")
    )
    assert skip_reason(Candidate(2, state=ESCALATE), set()) == Skipped(2, Skip.ESCALATED)


def test_every_state_a_new_attempt_may_replace_lets_its_issue_go_and_no_other() -> None:
    for state in [*State]:
        candidate = Candidate(1, boundary=("a.py",), state=state)
        goes = skip_reason(candidate, set()) is None
        assert goes == (state == NONE or may_replace(state)), state.name


def test_a_candidate_whose_boundary_overlaps_held_files_is_skipped_naming_them() -> None:
    candidate = Candidate(1, boundary=("src/b.py", "src/a.py", "c.py"))
    assert skip_reason(candidate, {"src/a.py", "src/b.py", "z.py"}) == (
        Skipped(1, Skip.HELD, ("src/a.py", "src/b.py"))
    )


def test_capacity_is_the_least_of_workers_lanes_and_the_container_guard() -> None:
    assert capacity(4, 8) == 4
    assert capacity(4, 2) == 2
    assert capacity(4, 8, container_room=1) == 1
    assert capacity(4, 8, container_room=0) == 0
    assert capacity(4, -1) == 0


def test_a_round_ranks_what_may_go_and_reports_every_skip_with_its_reason() -> None:
    candidates = [
        Candidate(4, ("P0",), boundary=("d.py",)),
        Candidate(1, ("P0",), boundary=("a.py",), open_blocker=True),
        Candidate(2, ("P0",), boundary=("b.py",)),
        Candidate(3, ("P0",), boundary=("held.py",)),
        Candidate(5, ("P0",), boundary=("e.py",)),
        Candidate(6, ("P0",), boundary=("f.py",)),
    ]
    held = [HeldOrder(9, ("held.py",), PH_RUNNING)]
    ranked, skipped = order_candidates(candidates, held)
    # the blocked and the overlapping criticals take none of the three critical places
    assert [(r.number, r.level) for r in ranked] == [
        (2, CRITICAL),
        (4, CRITICAL),
        (5, CRITICAL),
        (6, HIGH),
    ]
    assert skipped == [Skipped(1, Skip.OPEN_BLOCKER), Skipped(3, Skip.HELD, ("held.py",))]


def test_an_order_holds_its_files_from_other_issues_never_from_its_own() -> None:
    held = [HeldOrder(1, ("a.py",), PH_SENT_BACK, since_finish_seconds=60)]
    candidates = [
        Candidate(1, boundary=("a.py",), state=SENDBACK),
        Candidate(2, boundary=("a.py",)),
    ]
    ranked, skipped = order_candidates(candidates, held)
    assert [r.number for r in ranked] == [1]
    assert skipped == [Skipped(2, Skip.HELD, ("a.py",))]


def test_a_round_counts_the_criticals_already_running() -> None:
    candidates = [Candidate(n, ("P0",), boundary=(f"{n}.py",)) for n in (1, 2)]
    ranked, _ = order_candidates(candidates, [], running_critical=2)
    assert [(r.number, r.level) for r in ranked] == [(1, CRITICAL), (2, HIGH)]
