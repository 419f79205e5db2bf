"""The person of `hive chaos --loop` with the real git binary: a clean push adds a file of
its own, a conflicting one rewrites the first line of an issue's file still as it was
made, and a push the origin refuses is made again on the new main."""

from __future__ import annotations

from pathlib import Path

from hive.chaos import person as person_module
from hive.chaos.person import Person, edited_line, own_file, own_line
from hive.chaos.plan import Push
from hive.testing import git

ISSUE_FILE = "files/f{}.txt".format


def _origin(tmp_path: Path) -> Path:
    seed = tmp_path / "seed"
    seed.mkdir()
    git("init", "-q", "-b", "main", cwd=seed)
    for n in (1, 2):
        (seed / "files").mkdir(exist_ok=True)
        (seed / ISSUE_FILE(n)).write_text(f"file {n}\n")
    git("add", ".", cwd=seed)
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "seed", cwd=seed)
    origin = tmp_path / "origin.git"
    git("clone", "-q", "--bare", str(seed), str(origin), cwd=tmp_path)
    return origin


def test_a_clean_push_and_a_conflicting_one_land_on_main(tmp_path: Path) -> None:
    origin = _origin(tmp_path)
    person = Person(tmp_path, str(origin), ISSUE_FILE)
    said = person.push(Push(1.0, conflict=False), 1, lambda: [1])
    assert said.startswith("a person pushed ") and "(people/p1.txt, try 1)" in said
    assert git("show", f"main:{own_file(1)}", cwd=origin) == own_line(1)
    # #1's file was already edited by hand: the next issue in flight's is taken
    (tmp_path / "person" / ISSUE_FILE(1)).write_text("file 1\n")
    said = person.push(Push(2.0, conflict=True), 2, lambda: [2, 1])
    assert "(#2's file, try 1)" in said
    assert git("show", f"main:{ISSUE_FILE(2)}", cwd=origin) == edited_line(2)
    said = person.push(Push(3.0, conflict=True), 3, lambda: [2])  # #2's is edited already
    assert "(people/p3.txt, try 1)" in said
    assert [p.issue for p in person.pushed] == [None, 2, None]
    assert person.pushed[-1].sha == git("rev-parse", "main", cwd=origin)


def test_a_refused_push_is_made_again_on_the_new_main(tmp_path: Path) -> None:
    origin = _origin(tmp_path)
    hook = origin / "hooks" / "pre-receive"
    # the origin refuses the first push, as when the hive pushed a moment before
    hook.write_text(f'#!/bin/sh\nmkdir "{tmp_path}/refused" 2>/dev/null && exit 1\nexit 0\n')
    hook.chmod(0o755)
    person = Person(tmp_path, str(origin), ISSUE_FILE)
    said = person.push(Push(1.0, conflict=True), 1, lambda: [1])
    assert "(#1's file, try 2)" in said
    assert git("show", f"main:{ISSUE_FILE(1)}", cwd=origin) == edited_line(1)
    assert len(person.pushed) == 1


def test_a_push_refused_every_time_is_given_up_saying_why(tmp_path: Path, monkeypatch) -> None:
    origin = _origin(tmp_path)
    hook = origin / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\nexit 1\n")
    hook.chmod(0o755)
    monkeypatch.setattr(person_module, "PUSH_TRIES", 3)
    person = Person(tmp_path, str(origin), ISSUE_FILE)
    said = person.push(Push(1.0, conflict=False), 1, lambda: [])
    assert said == (
        "a person's push 1 was refused 3 times"
        " (! [remote rejected] HEAD -> main (pre-receive hook declined)): given up"
    )
    assert person.pushed == []
    # the tries also stop at the clock: with none left, the first try is the last
    monkeypatch.setattr(person_module, "PUSH_SECONDS", 0.0)
    assert " refused 1 times " in person.push(Push(2.0, conflict=False), 2, lambda: [])
