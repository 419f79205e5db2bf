"""`hive chaos --loop`'s pure parts: the reviewer's seeded verdicts, and the two
invariants of the whole loop."""

from __future__ import annotations

import subprocess

from hive.chaos.loop import (
    CRASH,
    ESCALATED,
    HANG,
    REVIEWER,
    SEND_BACK,
    IssueEnd,
    PushKept,
    check_red_once,
    kept_pushes,
    merged_once,
    on_main_once,
    review_counts,
    verdicts,
)


def test_the_verdicts_are_the_seeds_and_hold_send_backs_crashes_hangs_and_accepts():
    issues = list(range(1, 61))
    plan = verdicts(issues, 15)
    assert plan == verdicts(issues, 15) and plan != verdicts(issues, 16)
    kinds = [said[0] if len(said) == 1 else said or "accept" for said in plan.values()]
    assert {SEND_BACK, CRASH, HANG, ESCALATED, "accept"} == set(kinds)
    # one in twenty fails three times in a row, and is escalated by the failure floor
    assert sum(1 for said in plan.values() if said == ESCALATED) == 3
    assert list(verdicts([5], 1).values()) == [ESCALATED] and verdicts([], 1) == {}


def test_the_reviewer_takes_each_verdict_once_but_a_sticky_one_for_ever(tmp_path):
    (tmp_path / "reviews").mkdir()
    (tmp_path / "reviews" / "7").write_text("unmet\ncrash+\n")
    script = tmp_path / "reviewer.sh"
    script.write_text(REVIEWER)

    def review() -> int:
        env = {"HIVE_ISSUE": "7", "PATH": "/usr/bin:/bin"}
        return subprocess.run(["sh", str(script), str(tmp_path)], env=env, check=False).returncode

    assert [review() for _ in range(4)] == [0, 3, 3, 3]
    said = (tmp_path / "reviews.log").read_text()
    assert said == "review 7 unmet\n" + "review 7 crash\n" * 3
    (tmp_path / "reviews" / "8").write_text("")
    env = {"HIVE_ISSUE": "8", "PATH": "/usr/bin:/bin"}
    done = subprocess.run(["sh", str(script), str(tmp_path)], env=env, capture_output=True,
                          text=True, check=False)  # fmt: skip
    assert done.stdout == "HIVE-CRITERION: 1 met\n"


def test_the_check_is_red_for_the_first_merge_only():
    assert check_red_once("/c").startswith('if mkdir "/c/check-red"')


def test_review_counts_reads_the_reviewers_log():
    log = "review 1 unmet\nreview 1 met\nreview 2 crash\nreview 2 met\nreview 3 hang\ntorn\n"
    assert review_counts(log) == (1, 1, 1)


def test_merged_or_escalated_with_a_sentence_holds_and_anything_else_is_named():
    ends = [
        IssueEnd(1, "a" * 40, True),
        IssueEnd(2, None, False, "criterion 1 unmet three times"),
    ]
    check = merged_once(ends, " (1 sent back)")
    assert check.ok and check.measured == "1 merged, 1 escalated of 2 (1 sent back)"
    bad = merged_once(
        [
            IssueEnd(3, None, False),  # waits for ever
            IssueEnd(4, "b" * 40, False),  # merged, left open
            IssueEnd(5, None, True),  # closed without its merge
            IssueEnd(6, None, False, "  "),  # escalated with no sentence
        ]
    )
    assert bad.violations == (
        "#3: open, not merged and not escalated",
        "#4: open, not merged and not escalated",
        "#5: closed, not merged and not escalated",
        "#6: escalated without a sentence",
    )


def test_main_holds_each_change_once_none_lost_none_twice():
    merged = {1: "a" * 40, 2: "b" * 40, 3: "c" * 40, 4: "d" * 40}
    on_main = {1: True, 2: False, 3: True, 4: True}
    lines = {
        1: ["chaos 1 turn r/1", "chaos 1 turn r/2"],
        3: [],
        4: ["chaos 4 turn r/9", "chaos 4 turn r/9"],
    }
    check = on_main_once(merged, on_main, lines)
    assert check.measured == "4 merges on main"
    assert check.violations == (
        f"#2: its merge {'b' * 12} is not on main",
        "#3: main's file holds none of its turns' work",
        "#4: main holds 'chaos 4 turn r/9' 2 times",
    )
    assert on_main_once({1: "a" * 40}, {1: True}, {1: ["chaos 1 turn r/1"]}).ok


def test_main_keeps_every_push_of_a_person_and_names_one_lost():
    pushes = [
        PushKept("a" * 40, "people/p1.txt", True, True, None),
        PushKept("b" * 40, "files/f3.txt", True, True, 3),
    ]
    check = kept_pushes(pushes, 1)
    assert check.ok
    assert check.measured == (
        "2 pushes (1 to an issue's file, 1 clean), 1 turns merged the base after a conflict"
    )
    lost = kept_pushes(
        [
            PushKept("c" * 40, "people/p2.txt", False, False, None),  # forced away
            PushKept("d" * 40, "files/f4.txt", True, False, 4),  # a merge undid it
        ],
        0,
    )
    assert lost.violations == (
        f"{'c' * 12} (people/p2.txt): not on main",
        f"{'d' * 12}: main's files/f4.txt lost the person's line",
    )
