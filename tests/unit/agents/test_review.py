import sys
from pathlib import Path

import pytest

from hive.agents.checks import CheckResult, CheckTurn
from hive.agents.demo_review import judge
from hive.agents.review import ReviewTurn, criteria_from_brief, review_brief
from hive.rules.criteria import judgement_of


def test_the_brief_numbers_the_criteria_and_they_read_back() -> None:
    criteria = ["file `a.md` contains `x`", "multi\n  line   criterion"]
    brief = review_brief(7, "T", "body\n1. not a criterion", ["a.md"], criteria)
    assert criteria_from_brief(brief) == ["file `a.md` contains `x`", "multi line criterion"]


def test_demo_judge_reads_the_file_and_refuses_escapes(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("hello world\n")
    (tmp_path / "link").symlink_to("/etc/hostname")
    assert judge("file `a.md` contains `world`", tmp_path) == (True, "")
    assert judge("file `a.md` contains `moon`", tmp_path) == (False, "a.md does not contain `moon`")
    assert judge("file `b.md` contains `x`", tmp_path) == (False, "b.md does not exist")
    assert judge("file `../a.md` contains `x`", tmp_path)[0] is False  # type: ignore[index]
    assert judge("file `.git/HEAD` contains `x`", tmp_path)[0] is False  # type: ignore[index]
    assert judge("file `link` contains `x`", tmp_path) == (False, "link goes through a symlink")
    assert judge("the tests pass", tmp_path) is None


def test_a_demo_review_turn_prints_one_line_per_judged_criterion(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("hello\n")
    criteria = ["file `a.md` contains `hello`", "file `a.md` contains `bye`", "it is good"]
    review = ReviewTurn(
        "demo",
        issue=3,
        title="T",
        brief=review_brief(3, "T", "", ["a.md"], criteria),
        boundary=["a.md"],
        worktree=tmp_path,
    )
    review.start()
    done = review.wait()
    assert done.complete
    got = judgement_of(done.lines, len(criteria))
    assert (got.judged, got.met) == (2, 1)
    assert got.unmet == ((2, "a.md does not contain `bye`"),)


def test_a_review_past_its_bound_is_stopped_and_not_complete(tmp_path: Path) -> None:
    review = ReviewTurn(
        "command:echo 'HIVE-CRITERION: 1 met'; exec sleep 60",
        issue=3,
        title="T",
        brief="",
        boundary=[],
        worktree=tmp_path,
        bound_seconds=0.5,
    )
    review.start()
    done = review.wait()
    assert not done.complete
    assert done.ending.stop_reason is not None


@pytest.mark.parametrize(
    ("command", "result", "code"),
    [
        ("echo ok; exit 0", CheckResult.PASS, 0),
        ("echo broken >&2; exit 3", CheckResult.FAIL, 3),
        ("exec sleep 60", CheckResult.TIMEOUT, None),
    ],
)
def test_a_check_passes_fails_or_times_out(
    tmp_path: Path, command: str, result: CheckResult, code: int | None
) -> None:
    run = CheckTurn("unit", command, tmp_path, issue=1, timeout_seconds=0.5).run()
    assert run.result is result
    if code is not None:
        assert run.exit_code == code


def test_a_check_keeps_the_tail_of_its_output_and_runs_in_the_worktree(tmp_path: Path) -> None:
    (tmp_path / "marker").write_text("here\n")
    command = f"{sys.executable} -c \"print('\\n'.join(str(i) for i in range(5000)))\"; cat marker"
    run = CheckTurn("tail", command, tmp_path, issue=1, timeout_seconds=30).run()
    assert run.passed
    assert run.tail.endswith("4999\nhere")
    assert "\n0\n" not in run.tail


def test_a_stopped_check_is_an_error_not_a_pass(tmp_path: Path) -> None:
    check = CheckTurn("stop", "exec sleep 60", tmp_path, issue=1, timeout_seconds=30)
    check.stop("draining")
    assert check.run().result is CheckResult.ERROR
