"""The chaos run's invariants as pure functions: each holds on a clean run and names
every violation on a broken one."""

from __future__ import annotations

from hive.chaos.agent import TurnEvent, parse_log, work_line
from hive.chaos.invariants import (
    BundleCheck,
    Check,
    Ledger,
    Outliving,
    as_json,
    ended_once,
    lost_bundles,
    named_issues,
    outliving,
    outside_boundaries,
    overlapping_turns,
    sigterm_exits,
    sold_once,
    table,
)
from hive.rules.outcome_codes import OutcomeCode

FINISHED = OutcomeCode.FINISHED
HANDED_BACK = OutcomeCode.HANDED_BACK
SILENT = OutcomeCode.REAPED_RUNNER_SILENT


def events(*lines: str) -> list[TurnEvent]:
    return parse_log("\n".join(lines))


def test_an_order_finished_once_after_a_handed_back_attempt_holds():
    check = ended_once({1: [HANDED_BACK, FINISHED], 2: [FINISHED]})
    assert check.ok
    assert check.measured == "2 orders, 3 attempts"


def test_an_order_finished_twice_or_not_at_all_is_named():
    check = ended_once({1: [FINISHED, FINISHED], 2: [SILENT], 3: [None], 4: []})
    assert check.violations == (
        "#1: 2 finished in [finished, finished]",
        "#2: 0 finished in [reaped_runner_silent]",
        "#3: 0 finished in [not ended]",
        "#4: 0 finished in []",
    )


def test_an_outcome_read_as_text_is_not_a_code_and_never_counts_as_finished():
    # a reader that hands on the column's text (or an archived snapshot's JSON) unconverted
    # fails the run here rather than passing by the StrEnum's equality with its value
    assert ended_once({1: ["finished"]}).violations == ("#1: 0 finished in [finished]",)
    check = sold_once({"a": "finished"}, Ledger(()))
    assert check.ok  # text is not FINISHED, so its missing sale is not asked for
    assert sold_once({"a": FINISHED}, Ledger(())).violations == (
        "attempt a finished and was sold 0 times",
    )


def test_a_finished_attempt_that_is_not_the_last_is_named():
    check = ended_once({5: [FINISHED, SILENT]})
    assert check.violations == ("#5: 1 finished in [finished, reaped_runner_silent]",)


def test_turns_one_after_another_do_not_overlap():
    log = events(
        "start 1 r1/10", "tick 1 r1/10", "end 1 r1/10",
        "start 1 r2/11", "start 2 r1/12", "tick 1 r2/11", "end 2 r1/12",
    )  # fmt: skip
    check = overlapping_turns(log)
    assert check.ok and check.measured == "3 turns logged"


def test_a_turn_that_starts_while_another_of_its_issue_still_ticks_overlaps():
    # the first turn was never logged as ended (killed), but it ticked after the second began
    log = events("start 1 r1/10", "tick 1 r1/10", "start 1 r2/11", "tick 1 r1/10", "end 1 r2/11")
    assert overlapping_turns(log).violations == ("#1: r2/11 started while r1/10 was alive",)


def test_an_overlap_inside_a_long_turn_is_found_past_a_short_one():
    log = events("start 3 a/1", "start 3 b/2", "end 3 b/2", "start 3 c/3", "end 3 c/3", "end 3 a/1")
    assert overlapping_turns(log).violations == (
        "#3: b/2 started while a/1 was alive",
        "#3: c/3 started while a/1 was alive",
    )


def test_torn_and_foreign_lines_are_skipped():
    assert parse_log("start 1 r/1\nsta\nhello world x\ntick x r/1\nend 1 r/1 extra\n") == [
        TurnEvent("start", 1, "r/1")
    ]


def test_the_work_line_names_the_issue_and_the_turn():
    assert work_line(4, "runner0-2/77") == "chaos 4 turn runner0-2/77"


def test_a_bundle_is_lost_unless_stored_verified_fetched_and_holding_work():
    check = lost_bundles(
        [
            BundleCheck(1, True, True, True, True),
            BundleCheck(2, False, False, False, False),
            BundleCheck(3, True, False, True, False),
        ]
    )
    assert check.violations == (
        "#2: not stored, git bundle verify failed, git fetch failed, "
        "no ended turn's work on the branch",
        "#3: git bundle verify failed, no ended turn's work on the branch",
    )
    assert check.measured == "3 bundles fetched and verified"


def test_agents_gone_within_the_bound_hold_and_late_or_never_are_named():
    fine = outliving([Outliving("r1", (10, 11), 0.4), Outliving("r2", (), None)], 5.0)
    assert fine.ok and fine.measured == "2 agents of 2 dead runners, gone within 0.4 s"
    late = outliving([Outliving("r1", (10,), 5.5), Outliving("r2", (12,), None)], 5.0)
    assert late.violations == ("r1: pids [10] gone after 5.5 s", "r2: pids [12] gone after never")


def test_every_sigterm_must_exit_zero():
    assert sigterm_exits([("r1", 0), ("queen-1", 0)]).ok
    check = sigterm_exits([("r1", 0), ("r2", -15), ("queen-3", None), ("r4", 1)])
    assert check.violations == ("r2: exit -15", "queen-3: no exit", "r4: exit 1")


def test_the_table_has_a_row_per_check_and_names_at_most_five_violations_each():
    broken = ended_once({n: [OutcomeCode.ENDED_BADLY] for n in range(1, 8)})
    text = table([sigterm_exits([("r1", 0)]), broken])
    lines = text.splitlines()
    assert lines[0].split() == ["invariant", "result", "measured"]
    assert lines[1].startswith("every SIGTERM exits 0") and " ok " in lines[1]
    assert "FAIL 7" in lines[2]
    assert len([line for line in lines if "0 finished in" in line]) == 5
    assert lines[-1].endswith("... and 2 more")


def test_a_bundle_carrying_a_path_outside_its_boundary_is_named():
    check = outside_boundaries(
        [
            BundleCheck(1, True, True, True, True),
            BundleCheck(4, True, True, True, True, ("outside-4.txt", "passwd-4")),
        ]
    )
    assert check.violations == ("#4: carries outside-4.txt, passwd-4",)
    assert check.measured == "2 bundles' paths compared with their boundaries"


def test_each_finished_turn_sold_once_holds_and_every_other_sale_is_named():
    attempts = {"a": HANDED_BACK, "b": FINISHED, "c": OutcomeCode.REAPED_AT_BOOT}
    check = sold_once(attempts, Ledger(("bee:a", "bee:b", "review:b:1", "review:b:2")))
    assert check.ok and check.measured == "2 turns and 2 reviews sold, 3 attempts"
    broken = sold_once(
        {**attempts, "d": FINISHED, "e": None},
        Ledger(("bee:b", "bee:b", "bee:e", "bee:zz", "review:zz:1"), "a lot went below zero"),
    )
    assert broken.violations == (
        "review:zz:1 reviewed no ended attempt of the run",
        "attempt b finished and was sold 2 times",
        "attempt d finished and was sold 0 times",
        "attempt e was sold before it ended",
        "bee:zz was sold but is no attempt of the run",
        "a lot went below zero",
    )
    twice = sold_once({"a": HANDED_BACK}, Ledger(("bee:a", "bee:a")))
    assert twice.violations == ("attempt a (handed_back) was sold 2 times",)


def test_the_json_object_carries_each_invariant_the_seed_and_what_happened():
    checks = [Check("a holds", "3 of 3"), Check("b holds", "1 of 2", ("#7 lost",))]
    found = as_json(
        checks,
        15,
        61.234,
        ["4.0 s  SIGKILL runner 1"],
        [("runner0-2", 1, "boom")],
        {7: ["09:00:01 attempt 1 dispatched"]},
    )
    assert found == {
        "ok": False,
        "seed": 15,
        "seconds": 61.2,
        "invariants": {
            "a holds": {"ok": True, "measured": "3 of 3", "violations": []},
            "b holds": {"ok": False, "measured": "1 of 2", "violations": ["#7 lost"]},
        },
        "faults": ["4.0 s  SIGKILL runner 1"],
        "exited_by_itself": [{"name": "runner0-2", "exit": 1, "last_line": "boom"}],
        "histories": {"7": ["09:00:01 attempt 1 dispatched"]},
    }
    assert as_json(checks[:1], 1, 0.0, [], [])["ok"] is True


def test_the_issues_a_violation_names_first_are_found_once_each_in_order():
    checks = [
        Check("a", "", ("#12: lost", "#3: twice", "#12 (low) went before #4 (high)")),
        Check("b", "", ("attempt x was sold twice", "#0x: no issue", "#5")),
    ]
    assert named_issues(checks) == [12, 3, 5]
    assert named_issues(checks, most=2) == [12, 3]
    assert named_issues([Check("c", "")]) == []
