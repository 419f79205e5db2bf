"""A new issue is checked once for both faces (`hive issue add`, `POST /api/issues`), with
the one boundary-path rule; an issue number is digits only."""

from __future__ import annotations

import pytest

from hive.services.errors import BadRequest
from hive.services.issues import INT4_MAX, BadIssue, BadIssueNumber, check, from_json, issue_number
from hive.store.issues import NewIssue


def test_check_trims_the_title_and_normalises_the_boundary() -> None:
    issue = check(NewIssue(title=" Fix it ", boundary=("./src/app.py", "docs//a.md", "b/")))
    assert (issue.title, issue.boundary) == ("Fix it", ("src/app.py", "docs/a.md", "b"))


@pytest.mark.parametrize(
    ("boundary", "message"),
    [
        (("ok.py", ".git/config"), "boundary[1]: '.git/config' points into .git"),
        (("a\nb.py",), "boundary[0]: 'a\\nb.py' holds a control character"),
        (("../x",), "boundary[0]: '../x' climbs out with '..'"),
        (("/etc/passwd",), "boundary[0]: '/etc/passwd' is absolute"),
        ((".",), "boundary[0]: '.' names the whole repository"),
    ],
)
def test_a_boundary_path_the_rule_refuses_names_its_field(
    boundary: tuple[str, ...], message: str
) -> None:
    with pytest.raises(BadIssue) as caught:
        check(NewIssue(title="t", boundary=boundary))
    assert str(caught.value).startswith(message)
    assert (caught.value.status, caught.value.exit_code) == (400, 2)


def test_a_json_body_becomes_a_checked_issue() -> None:
    issue = from_json({"title": " t ", "boundary": ["./a.py"], "body": None})
    assert issue == NewIssue(title="t", boundary=("a.py",))


def test_an_issue_number_is_a_positive_int4_in_ascii_digits() -> None:
    assert issue_number("7") == 7
    assert issue_number(str(INT4_MAX)) == INT4_MAX
    for text in ("0", "-1", "x", "", "٣", str(INT4_MAX + 1), " 7"):
        with pytest.raises(BadIssueNumber):
            issue_number(text)
    assert issubclass(BadIssueNumber, BadRequest)


def test_a_boundary_of_seven_thousand_paths_is_refused_with_its_bound() -> None:
    from hive.rules.intake import BOUNDARY_PATHS_MAX

    paths = tuple(f"src/f{n}.py" for n in range(7000))
    with pytest.raises(BadIssue, match=f"boundary: 7000 items, at most {BOUNDARY_PATHS_MAX}"):
        check(NewIssue(title="t", boundary=paths))


def test_duplicates_collapse_before_they_are_counted() -> None:
    checked = check(
        NewIssue(
            title="t",
            labels=("hive",) * 500,
            boundary=("src/a.py", "./src/a.py", "src//a.py") * 100,
            criteria=("works",) * 300,
        )
    )
    assert (checked.labels, checked.boundary, checked.criteria) == (
        ("hive",),
        ("src/a.py",),
        ("works",),
    )


@pytest.mark.parametrize(
    ("field", "values", "says"),
    [
        ("labels", tuple(f"l{n}" for n in range(101)), "labels: 101 items, at most 100"),
        ("criteria", tuple(f"c{n}" for n in range(101)), "criteria: 101 items, at most 100"),
    ],
)
def test_too_many_labels_or_criteria_are_refused(
    field: str, values: tuple[str, ...], says: str
) -> None:
    with pytest.raises(BadIssue, match=says):
        check(NewIssue(title="t", **{field: values}))


def test_a_boundary_path_past_name_max_is_refused() -> None:
    with pytest.raises(BadIssue, match=r"boundary\[0\]: .* has a name of 256 bytes"):
        check(NewIssue(title="t", boundary=("src/" + "x" * 256,)))


def test_a_boundary_with_nfc_and_nfd_twins_is_refused() -> None:
    import unicodedata

    twins = tuple(unicodedata.normalize(form, "src/café.py") for form in ("NFC", "NFD"))
    with pytest.raises(BadIssue, match="name one file on macOS and Windows"):
        check(NewIssue(title="t", boundary=twins))


def test_a_boundary_with_case_twins_is_refused() -> None:
    with pytest.raises(BadIssue, match=r"'README\.md' and 'readme\.md' name one file"):
        check(NewIssue(title="t", boundary=("README.md", "readme.md")))
