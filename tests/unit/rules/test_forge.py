"""The forge's rules: an issue body's sections, the gate's case from the checks, the case
of a pull request that will not merge, and the watch's comments."""

from __future__ import annotations

import pytest

from hive.rules.forge_body import body_sections
from hive.rules.forge_checks import (
    CheckFact,
    CheckState,
    Gate,
    base_red_closes,
    check_run_state,
    gate_case,
    inherited_tail,
    status_state,
)
from hive.rules.forge_git import forge_git_origin, git_sends_token
from hive.rules.forge_notes import Note, note_action, note_body
from hive.rules.forge_stuck import (
    NEXT_MOVE,
    PARKS,
    PUSHES_AGAIN,
    SENDS_BACK,
    TAKES_MERGE,
    PullFacts,
    Stuck,
    stuck_of_pull,
    stuck_of_refusal,
    stuck_of_state,
    stuck_sentence,
)

BODY = """Say hello properly.

## Boundary
- `hello.py`
- docs/hello.md
* hello.py

### Acceptance criteria:
1. file `hello.py` contains `print("hello")`
2) - [ ] the docs mention it
- [x] file `docs/hello.md` contains `hello`

## Notes
- not/a/path.py
"""


def test_the_boundary_and_criteria_sections_are_read():
    found = body_sections(BODY)
    assert found.boundary == ("hello.py", "docs/hello.md")
    assert found.criteria == (
        'file `hello.py` contains `print("hello")`',
        "- [ ] the docs mention it",
        "file `docs/hello.md` contains `hello`",
    )


def test_a_body_without_sections_has_neither():
    assert body_sections("just words\n- a list\n").boundary == ()
    assert body_sections(None).criteria == ()
    assert body_sections("## Files\r\n- a.py\r\n").boundary == ("a.py",)


def _c(name: str, state: CheckState, summary: str = "") -> CheckFact:
    return CheckFact(name, state, summary)


P, F, W = CheckState.PASS, CheckState.FAIL, CheckState.PENDING


def test_zero_checks_never_open_the_gate():
    assert gate_case([], []).gate == Gate.NONE


def test_a_pending_check_waits():
    assert gate_case([_c("a", P), _c("b", W)], []).gate == Gate.PENDING


def test_all_green_is_green():
    assert gate_case([_c("a", P), _c("b", P)], []).gate == Gate.GREEN


def test_a_red_check_green_on_base_is_the_bees():
    case = gate_case([_c("a", P), _c("lint", F, "E501")], [])
    assert case.gate == Gate.RED and case.red == (_c("lint", F, "E501"),)


def test_a_red_check_also_red_on_base_is_inherited():
    case = gate_case([_c("a", P), _c("lint", F)], ["lint"])
    assert case.gate == Gate.INHERITED and [c.name for c in case.red] == ["lint"]


def test_one_own_red_beside_an_inherited_one_is_the_bees():
    case = gate_case([_c("unit", F), _c("lint", F)], ["lint"])
    assert case.gate == Gate.RED and [c.name for c in case.red] == ["unit"]


def test_an_issue_about_a_red_base_closes_when_its_check_passes_again():
    seen = [_c("lint", P), _c("unit", P)]
    assert base_red_closes(["lint"], seen) == ("lint",)
    assert base_red_closes(["unit", "lint", "lint"], seen) == ("lint", "unit")


def test_an_issue_about_a_red_base_stays_open_while_its_check_is_red_pending_or_unseen():
    assert base_red_closes(["lint"], [_c("lint", F), _c("unit", P)]) == ()
    assert base_red_closes(["lint"], [_c("lint", W)]) == ()
    assert base_red_closes(["lint"], [_c("unit", P)]) == ()
    assert base_red_closes([], [_c("lint", P)]) == ()


@pytest.mark.parametrize(
    ("status", "conclusion", "state"),
    [
        ("queued", None, W),
        ("in_progress", None, W),
        ("completed", "success", P),
        ("completed", "neutral", P),
        ("completed", "skipped", P),
        ("completed", "failure", F),
        ("completed", "timed_out", F),
        ("completed", "cancelled", F),
        ("completed", "action_required", F),
        ("completed", "stale", F),
    ],
)
def test_check_run_states(status, conclusion, state):
    assert check_run_state(status, conclusion) == state


def test_commit_status_states():
    assert [status_state(s) for s in ("success", "failure", "error", "pending", None)] == [
        P,
        F,
        F,
        W,
        W,
    ]


def test_a_pull_request_state_names_one_case():
    assert stuck_of_state(True, "clean") == Stuck.NONE
    assert stuck_of_state(True, "unstable") == Stuck.NONE
    assert stuck_of_state(False, "dirty") == Stuck.CONFLICT
    assert stuck_of_state(None, "unknown") == Stuck.COMPUTING
    assert stuck_of_state(True, "blocked") == Stuck.NONE  # the merge's refusal says which
    assert stuck_of_state(True, "behind") == Stuck.BEHIND
    assert stuck_of_state(False, "draft") == Stuck.DRAFT


HEAD = "a" * 40
OTHER = "b" * 40


@pytest.mark.parametrize(
    ("state", "merged", "head", "mergeable", "mergeable_state", "case"),
    [
        ("open", False, HEAD, True, "clean", Stuck.NONE),
        ("open", False, HEAD, None, "unknown", Stuck.COMPUTING),
        ("open", False, HEAD, False, "dirty", Stuck.CONFLICT),
        ("open", False, HEAD, True, "behind", Stuck.BEHIND),
        ("open", False, HEAD, False, "draft", Stuck.DRAFT),
        ("open", False, OTHER, True, "clean", Stuck.STALE),
        ("open", False, OTHER, False, "dirty", Stuck.STALE),  # a moved head is read first
        ("open", False, "", True, "clean", Stuck.HEAD_GONE),
        ("closed", False, "", None, "unknown", Stuck.HEAD_GONE),
        ("closed", False, HEAD, None, "unknown", Stuck.CLOSED),
        ("closed", False, OTHER, True, "clean", Stuck.CLOSED),
        ("closed", True, HEAD, None, "unknown", Stuck.MERGED),
        ("closed", True, OTHER, None, "unknown", Stuck.MERGED),
    ],
)
def test_a_pull_request_is_in_exactly_one_case(
    state, merged, head, mergeable, mergeable_state, case
):
    assert stuck_of_pull(PullFacts(state, merged, head, mergeable, mergeable_state), HEAD) == case


def test_the_ten_cases_each_have_one_kind_of_move():
    moves = [PARKS, SENDS_BACK, PUSHES_AGAIN, TAKES_MERGE]
    cases = set(Stuck) - {Stuck.NONE}
    assert len(cases) == 10
    for case in cases:
        assert sum(case in move for move in moves) == 1, case
    assert set().union(*moves) == cases
    # the sentence says what the move does
    for case in SENDS_BACK:
        assert "sends the work back" in NEXT_MOVE[case]
    for case in PUSHES_AGAIN:
        assert (
            "pushes the accepted head again" in NEXT_MOVE[case]
            or "opens a new" in (NEXT_MOVE[case])
        )


def test_a_refused_merge_names_one_case():
    assert (
        stuck_of_refusal(409, "Head branch was modified. Review and try the merge again.")
        == Stuck.STALE
    )
    assert (
        stuck_of_refusal(
            405, "At least 1 approving review is required by reviewers with write access."
        )
        == Stuck.REVIEW
    )
    assert stuck_of_refusal(405, 'Required status check "ci" is expected.') == Stuck.PROTECTED
    assert stuck_of_refusal(405, "Pull Request is not mergeable") == Stuck.CONFLICT
    assert stuck_of_refusal(405, "Head branch is not up to date with the base") == Stuck.BEHIND
    assert stuck_of_refusal(405, "Pull Request is still a draft") == Stuck.DRAFT
    # a push landed on the base as GitHub merged (the 60-issue chaos --forge github run,
    # seed 27): look again in a moment, not wait for a review nobody asked for
    base_moved = "Base branch was modified. Review and try the merge again."
    assert stuck_of_refusal(405, base_moved) == Stuck.COMPUTING


def test_every_case_has_the_queens_next_move():
    assert set(NEXT_MOVE) == set(Stuck) - {Stuck.NONE}
    line = stuck_sentence(7, Stuck.REVIEW)
    assert line.startswith("pull request #7 will not merge (required review): ")


def test_a_note_is_created_once_then_edited_only_when_it_changes():
    body = note_body(Note.MERGED, "merged as abc")
    assert body.endswith("<!-- hive:merged -->")
    assert note_action(None, body) == "create"
    assert note_action(body, body) == "none"
    assert note_action(body, note_body(Note.MERGED, "merged as def")) == "edit"


def test_an_inherited_check_s_output_is_headed_for_people() -> None:
    marked = inherited_tail("main", "lint: 3 errors")
    assert marked == "also red on main: not this work's fault\nlint: 3 errors"


@pytest.mark.parametrize(
    ("api", "origin"),
    [
        ("https://api.github.com", ("https", "github.com", 443)),
        ("https://GHE.example.com/api/v3", ("https", "ghe.example.com", 443)),
        ("https://ghe.example.com:8443/api/v3", ("https", "ghe.example.com", 8443)),
        ("http://127.0.0.1:5000/api/v3", ("http", "127.0.0.1", 5000)),
    ],
)
def test_the_forge_serves_git_on_its_own_host(api, origin):
    assert forge_git_origin(api) == origin


@pytest.mark.parametrize(
    ("url", "api", "sends"),
    [
        ("https://github.com/octo/hello.git", "https://api.github.com", True),
        ("https://GitHub.com:443/octo/hello", "https://api.github.com", True),
        ("https://ghe.example.com/octo/hello.git", "https://ghe.example.com/api/v3", True),
        ("http://127.0.0.1:5000/octo/hello.git", "http://127.0.0.1:5000/api/v3", True),
        # another host, port or scheme, or a URL with credentials of its own: nothing
        ("https://gitlab.com/octo/hello.git", "https://api.github.com", False),
        ("https://api.github.com/octo/hello.git", "https://api.github.com", False),
        ("https://github.com.evil.example/octo/hello.git", "https://api.github.com", False),
        ("https://github.com:8443/octo/hello.git", "https://api.github.com", False),
        ("http://github.com/octo/hello.git", "https://api.github.com", False),
        ("git://github.com/octo/hello.git", "https://api.github.com", False),
        ("https://me:pw@github.com/octo/hello.git", "https://api.github.com", False),
        ("http://127.0.0.1:5001/octo/hello.git", "http://127.0.0.1:5000/api/v3", False),
        ("http://10.0.0.1:5000/octo/hello.git", "http://10.0.0.1:5000/api/v3", False),
        ("/srv/git/hello.git", "https://api.github.com", False),
        ("file:///srv/git/hello.git", "https://api.github.com", False),
        ("https://github.com:99999/x", "https://api.github.com", False),
    ],
)
def test_the_token_goes_only_to_the_forges_git_origin(url, api, sends):
    assert git_sends_token(url, api) is sends
