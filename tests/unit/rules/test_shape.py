"""RULES 6: when an issue is work, and the one reason when it is not."""

import pytest

from hive.rules.shape import (
    MAX_BOUNDARY_PATHS,
    MAX_SYMLINK_HOPS,
    NEVER_TASK_LABELS,
    PathFault,
    plain_path,
    resolve,
    shape_problem,
)

FILES = frozenset({"README.md", "src/app.py", "src/util.py", "docs/guide.md", "lib/x.py"})
DIRS = frozenset({"src", "docs", "lib", "src/deep"})
LINKS = {"out": "../elsewhere", "abs": "/etc", "inner": "src", "up": "src/../..", "lib/x.py": "y"}


def problem(boundary: list[str], body: str = "", labels: tuple[str, ...] = ()) -> str | None:
    return shape_problem(labels, boundary, body, FILES, DIRS, LINKS)


def test_a_boundary_of_real_files_is_work() -> None:
    assert problem(["src/app.py"]) is None
    assert problem(["README.md", "src/util.py"]) is None


def test_a_new_file_is_work_when_its_directory_exists_and_the_body_cites_it() -> None:
    assert problem(["src/new.py"], body="Add src/new.py with a parser.") is None
    assert problem(["NEW.md"], body="Write NEW.md") is None  # the root always exists


def test_a_new_file_the_body_does_not_cite_is_refused() -> None:
    assert problem(["src/new.py"], body="Add a parser.") == (
        "boundary path 'src/new.py' names no file at base and the body does not cite it"
    )


def test_a_new_file_in_a_missing_directory_is_refused() -> None:
    assert problem(["nope/new.py"], body="nope/new.py") == (
        "boundary path 'nope/new.py' names no file at base and its directory does not exist"
    )


def test_a_directory_is_not_a_file() -> None:
    assert problem(["src"], body="src") == "boundary path 'src' is a directory; name the files"


def test_a_boundary_has_1_to_12_paths() -> None:
    assert MAX_BOUNDARY_PATHS == 12
    assert problem([]) == "no boundary: name 1 to 12 files the work may touch"
    twelve = [f"src/n{i}.py" for i in range(12)]
    assert problem(twelve, body=" ".join(twelve)) is None
    thirteen = [*twelve, "src/n12.py"]
    assert problem(thirteen, body=" ".join(thirteen)) == "the boundary names 13 paths; at most 12"


def test_a_path_listed_twice_is_refused_naming_it() -> None:
    assert problem(["README.md", "src/app.py", "src/app.py"]) == (
        "boundary path 'src/app.py' is listed twice"
    )


def test_dot_dot_and_absolute_paths_are_refused() -> None:
    assert problem(["../x.py"]) == "boundary path '../x.py' climbs out with '..'"
    assert problem(["src/../README.md"]) == "boundary path 'src/../README.md' climbs out with '..'"
    assert problem(["/etc/passwd"]) == (
        "boundary path '/etc/passwd' is absolute; name it from the repository root"
    )
    assert problem(["\\share\\x"]) == (
        "boundary path '\\\\share\\\\x' is absolute; name it from the repository root"
    )


@pytest.mark.parametrize(
    ("path", "plain"),
    [
        ("src/app.py", "src/app.py"),
        ("./src/app.py", "src/app.py"),
        ("src/./app.py", "src/app.py"),
        ("src//app.py", "src/app.py"),
        ("src/", "src"),
        (" src/app.py ", "src/app.py"),
        ("a file.py", "a file.py"),
        ("src/.github/x.yml", "src/.github/x.yml"),
        ("src/app.git", "src/app.git"),
    ],
)
def test_plain_path_normalises_a_path_inside_the_repository(path: str, plain: str) -> None:
    assert plain_path(path) == plain


@pytest.mark.parametrize(
    ("path", "fault"),
    [
        ("", PathFault.EMPTY),
        ("  ", PathFault.EMPTY),
        ("src/a\nb.py", PathFault.CONTROL),
        ("src/app.py\n", PathFault.CONTROL),
        ("src/\x00", PathFault.CONTROL),
        ("src/\tapp.py", PathFault.CONTROL),
        ("src/\x7fapp.py", PathFault.CONTROL),
        ("/etc/passwd", PathFault.ABSOLUTE),
        ("//host/x", PathFault.ABSOLUTE),
        ("\\share\\x", PathFault.ABSOLUTE),
        ("src\\app.py", PathFault.BACKSLASH),
        ("..", PathFault.CLIMBS),
        ("../x.py", PathFault.CLIMBS),
        ("src/../README.md", PathFault.CLIMBS),
        ("./../x", PathFault.CLIMBS),
        (".git/config", PathFault.GIT),
        ("./.git/hooks/pre-commit", PathFault.GIT),
        ("sub/.git/config", PathFault.GIT),
        (".GIT/config", PathFault.GIT),
        (".", PathFault.WHOLE),
        ("./", PathFault.WHOLE),
    ],
)
def test_plain_path_refuses_what_names_no_place_inside_the_repository(
    path: str, fault: PathFault
) -> None:
    assert plain_path(path) is fault


def test_a_path_written_with_dot_slash_or_doubled_slashes_is_the_plain_path() -> None:
    # the shape rule once refused these while the git check accepted them
    assert problem(["./src/app.py", "docs//guide.md"]) is None
    assert problem(["./src/new.py"], body="Add src/new.py") is None
    assert problem(["src/"]) == "boundary path 'src/' is a directory; name the files"


def test_a_path_into_git_or_with_a_control_character_is_refused() -> None:
    # the shape rule once let these through to the git check
    assert problem([".git/hooks/post-checkout"], body=".git/hooks/post-checkout") == (
        "boundary path '.git/hooks/post-checkout' points into .git"
    )
    assert problem(["src/a\nb.py"], body="src/a\nb.py") == (
        "boundary path 'src/a\\nb.py' holds a control character (a NUL or a newline, say)"
    )
    assert problem(["", "src\\app.py"]) == "boundary path '' is empty"
    assert problem(["src\\app.py"]) == (
        "boundary path 'src\\\\app.py' holds a backslash; separate directories with '/'"
    )


def test_a_path_through_a_symlink_out_of_the_repository_is_refused() -> None:
    for path in ("out/x.py", "abs/passwd", "up/x.py"):
        assert problem([path], body=path) == (
            f"boundary path {path!r} goes through a symlink out of the repository"
        )


def test_a_path_through_a_symlink_inside_the_repository_names_its_target() -> None:
    # the bee refuses to write through a symlinked directory: so is it refused here
    assert problem(["inner/app.py"]) == (
        "boundary path 'inner/app.py' passes through the symlink 'inner': name the file by"
        " its real path 'src/app.py'"
    )
    assert resolve("inner/app.py", LINKS) == "src/app.py"
    # a link to a file: the boundary names the file it points at, which must exist
    assert resolve("lib/x.py", LINKS) == "lib/y"
    assert problem(["lib/x.py"]) == (
        "boundary path 'lib/x.py' names no file at base and the body does not cite it"
    )


def test_a_symlink_loop_is_treated_as_leaving_the_repository() -> None:
    loop = {"a": "b", "b": "a"}
    assert MAX_SYMLINK_HOPS == 40
    assert resolve("a/x", loop) is None
    chain = {f"l{i}": f"l{i + 1}" for i in range(MAX_SYMLINK_HOPS)}
    assert resolve("l0", chain) == f"l{MAX_SYMLINK_HOPS}"
    chain[f"l{MAX_SYMLINK_HOPS}"] = "end"
    assert resolve("l0", chain) is None


def test_a_symlink_to_the_root_stays_inside() -> None:
    assert resolve("here/src/app.py", {"here": "."}) == "src/app.py"
    assert resolve("src/up/README.md", {"src/up": ".."}) == "README.md"
    assert resolve("src/out", {"src/out": "../.."}) is None


def test_epic_and_roadmap_issues_are_never_tasks() -> None:
    assert frozenset({"epic", "roadmap"}) == NEVER_TASK_LABELS
    assert problem(["src/app.py"], labels=("bug", "epic")) == (
        "labelled 'epic', and an issue so labelled is never a task"
    )
    assert problem(["src/app.py"], labels=("roadmap",)) == (
        "labelled 'roadmap', and an issue so labelled is never a task"
    )


def test_the_first_bad_path_is_the_one_reason_given() -> None:
    assert problem(["src/app.py", "../a", "/b"]) == "boundary path '../a' climbs out with '..'"


def test_a_symlink_whose_target_goes_through_another_symlink_is_followed_all_the_way() -> None:
    assert resolve("l", {"l": "inner/app.py", "inner": "src"}) == "src/app.py"
    # the second link leaves: so does the path
    assert resolve("l/x.py", {"l": "a/b", "a": ".."}) is None
    assert resolve("l", {"l": "a/b", "a": "/etc"}) is None
