"""What `hive demo` works on: a small sample repository (written with dulwich, so no git
binary is needed) and five issues in the demo agent's body form (hive/agents/demo.py),
each with its boundary and acceptance criteria in the demo reviewer's form
(``file `PATH` contains `TEXT` ``, hive/agents/demo_review.py).

Each issue touches one file of its own, so no two boundaries overlap and two runners can
work side by side; each turn sleeps a moment, so the demo shows both runners busy. Issue 3
misses its criterion on the first attempt (its fix is an `after a send-back:` line), so
the reviewer sends it back once and accepts its second attempt. Issue 6 (`SHAPED`)
arrives as a person writes one, with no boundary and no criteria: the demo shaper
(hive/agents/demo_shape.py) proposes both from its lines and the hive applies them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from hive.git.commits import init_repository
from hive.store.issues import NewIssue

BASE = "main"
AUTHOR = b"hive demo <demo@hive.invalid>"

FILES: Mapping[str, str] = {
    "README.md": "# greeter\n\nA very small program that greets people.\n",
    "greet.py": (
        "def greet(name: str) -> str:\n"
        '    return f"Hello, {name}!"\n'
        "\n"
        "\n"
        'if __name__ == "__main__":\n'
        '    print(greet("world"))\n'
    ),
    "docs/usage.md": "# Usage\n\n    python greet.py\n",
    "CHANGELOG.md": "# Changelog\n\n## Unreleased\n",
    "config/greeting.toml": 'greeting = "Hello"\n',
}


@dataclass(frozen=True)
class SampleIssue:
    number: int
    issue: NewIssue


def _issue(
    number: int, title: str, lines: list[str], boundary: str, criteria: list[str]
) -> SampleIssue:
    body = "\n".join(
        [
            f"{title}.",
            "",
            "The demo agent carries out the lines below (write, append, sleep) inside the",
            "boundary and commits them; the demo reviewer judges the criteria.",
            "",
            *lines,
        ]
    )
    made = NewIssue(
        title=title, body=body, boundary=(boundary,), criteria=tuple(criteria), labels=("demo",)
    )
    return SampleIssue(number, made)


ISSUES: tuple[SampleIssue, ...] = (
    _issue(
        1,
        "Say goodbye as well as hello",
        [
            "append `greet.py`: ",
            "append `greet.py`: def farewell(name: str) -> str:",
            'append `greet.py`:     return f"Goodbye, {name}!"',
            "sleep 1",
        ],
        "greet.py",
        [
            "file `greet.py` contains `def farewell(name: str)`",
            "file `greet.py` contains `Goodbye`",
        ],
    ),
    _issue(
        2,
        "Document how to say goodbye",
        ["sleep 1.5", "append `docs/usage.md`: Call farewell(name) to say goodbye."],
        "docs/usage.md",
        ["file `docs/usage.md` contains `farewell(name)`"],
    ),
    _issue(
        3,
        "Record the farewell in the changelog",
        [
            "append `CHANGELOG.md`: - greet.py can say goodbye.",
            "after a send-back: append `CHANGELOG.md`: - The function is farewell(name).",
            "sleep 1",
        ],
        "CHANGELOG.md",
        ["file `CHANGELOG.md` contains `farewell(name)`"],
    ),
    _issue(
        4,
        "Tell readers how to run it",
        ["append `README.md`: ", "append `README.md`: Run `python greet.py`.", "sleep 0.5"],
        "README.md",
        ["file `README.md` contains `python greet.py`"],
    ),
    _issue(
        5,
        "Make the greeting configurable in volume",
        ["sleep 1", 'append `config/greeting.toml`: volume = "loud"'],
        "config/greeting.toml",
        ['file `config/greeting.toml` contains `volume = "loud"`'],
    ),
)


SHAPED = SampleIssue(
    6,
    NewIssue(
        title="Greet in French too",
        body="\n".join(
            [
                "Greet in French too.",
                "",
                "This one comes with no boundary and no criteria, as a person writes an",
                "issue: the demo shaper proposes both from the line below, the hive applies",
                "them, and then it is work like the others.",
                "",
                "append `docs/french.md`: Bonjour, {name} !",
            ]
        ),
        labels=("demo",),
    ),
)
# every issue `hive demo` adds: the shaped ones and the one it shapes
ALL_ISSUES: tuple[SampleIssue, ...] = (*ISSUES, SHAPED)


def make_repository(path: Path, files: Mapping[str, str] = FILES) -> str:
    """Create a repository at `path` (non-bare, branch `main`, one commit of `files`:
    path -> text, by default the demo's sample project); return the commit's sha."""
    message = "greeter: the sample project of hive demo\n"
    return init_repository(path, files, branch=BASE, message=message, author=AUTHOR)
