"""An issue's branch: one name, read back to its issue."""

from hive.rules.branches import branch_issue, branch_name


def test_an_issue_names_its_branch_and_the_branch_its_issue() -> None:
    assert branch_name(12) == "queen-12"
    assert branch_issue(branch_name(12)) == 12


def test_a_queen_branch_names_its_issue() -> None:
    assert branch_issue("queen-12") == 12
    assert [branch_issue(b) for b in ("main", "queen-0", "queen-012", None, "queen-1x")] == [
        None
    ] * 5
