"""`hive chaos --forge github`'s seeded plan and its invariants (pure)."""

from hive.chaos.github import git_failures
from hive.chaos.github_checks import (
    PullEnd,
    closed_once,
    followed_last,
    never_two_open,
    pulls_merged_once,
)
from hive.chaos.github_plan import HELD, ApiKind, PullEvent, ci_answer, make_github_plan


def test_the_same_seed_gives_the_same_plan_and_each_issue_one_event_at_most() -> None:
    issues = list(range(1, 31))
    plan = make_github_plan(issues, 7, 100.0, 2, 3)
    assert plan == make_github_plan(issues, 7, 100.0, 2, 3)
    assert plan != make_github_plan(issues, 8, 100.0, 2, 3)
    assert len(plan.events) == 2 * len(PullEvent)
    assert set(plan.events) <= set(issues)
    assert sorted(f.kind.value for f in plan.faults) == sorted(
        k.value for k in ApiKind for _ in "abc"
    )
    times = [f.at_seconds for f in plan.faults]
    assert times == sorted(times) and times[0] > 0 and times[-1] < 100
    assert all((f.issue in issues) == (f.kind == ApiKind.WEBHOOKS) for f in plan.faults)


def test_few_issues_get_fewer_events() -> None:
    plan = make_github_plan([1, 2, 3], 1, 10.0, 1, 0)
    assert len(plan.events) == 3 and plan.faults == ()


def test_the_ci_holds_a_first_head_a_person_acts_on_and_is_red_once() -> None:
    for event in HELD:
        assert ci_answer(event, True) == (None, "")
        assert ci_answer(event, False)[0] == "success"
    assert ci_answer(PullEvent.NEVER_FINISHES, False) == (None, "")
    assert ci_answer(PullEvent.RED_ONCE, True)[0] == "failure"
    assert ci_answer(PullEvent.RED_ONCE, False)[0] == "success"
    assert ci_answer(None, True)[0] == "success"


def test_each_merge_once_on_github_and_none_for_an_escalated_issue() -> None:
    pulls = [PullEnd(11, 1, True, "a" * 40, False), PullEnd(12, 2, False, None, False),
             PullEnd(13, 2, True, "b" * 40, False), PullEnd(14, 3, True, "c" * 40, True),
             PullEnd(15, 4, True, "d" * 40, True)]  # fmt: skip
    ok = pulls_merged_once({1: "a" * 40, 2: "b" * 40}, [3], pulls, [3])
    assert ok.ok and ok.measured == "5 pull requests, 4 merged (2 by a person)"
    bad = pulls_merged_once({1: "f" * 40, 4: "d" * 40, 5: "e" * 40}, [2], pulls, [4])
    assert bad.violations == (
        "#4: a person's merge at another head was taken as its work",
        f"#1: merged as {'a' * 12}, the store says {'f' * 12}",
        "#5: 0 merged pull requests",
        "#2: escalated, yet the hive merged pull request #13",
    )


def test_two_open_pull_requests_closes_and_titles() -> None:
    assert never_two_open({1: 1, 2: 2}, 9).violations == ("#2: 2 open pull requests at once",)
    check = closed_once([1, 2], [1, 2, 2, 3], {1: 1, 2: 2, 4: 1})
    assert check.violations == (
        "#2: merged and closed 2 times",
        "#2: its merge commented 2 times",
        "#3: closed on GitHub without its merge",
        "#4: a merge commented without its merge",
    )
    assert closed_once([1], [1], {1: 1}).ok
    titles = followed_last({1: "b1", 2: "a2", 3: "x"}, {1: "b1", 2: "b2", 3: "b3"},
                           {1: "a1", 2: "a2", 3: "a3"})  # fmt: skip
    assert titles.violations == ("#2: the store says 'a2', the older of two edits delivered late",)
    assert titles.measured.endswith("; 1 followed the newest")


def test_a_failed_git_request_of_the_fake_is_said_with_what_it_raised() -> None:
    assert git_failures([]) is None
    push = "/chaos/hive.git/git-receive-pack: PackFileDisappeared(Pack('p'))"
    fetch = "/chaos/hive.git/git-upload-pack: GitProtocolError('Client wants invalid object')"
    said = git_failures([push, fetch, fetch])
    assert said is not None
    assert "failed 1 push and 2 fetches (500)" in said and "PackFileDisappeared" in said
    assert "failed 0 pushes and 1 fetch" in (git_failures([fetch]) or "")
