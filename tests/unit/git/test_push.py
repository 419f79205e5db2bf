"""`hive.git.push`: a new base tip lands on a bare repository made by `git init --bare`
only while the branch is at the old sha; ten pushers racing all land, none lost."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from dulwich.objects import ObjectID
from dulwich.repo import Repo

import hive.git.localcopy as localcopy
import hive.git.push as push_module
from hive.bench.gitdaemon import GitDaemon
from hive.git.merge import Merged, merge
from hive.git.push import Moved, Pushed, PushError, push
from hive.git.repo import open_checkout, refresh_base
from hive.git.safety import UnsafeGitError
from hive.testing import git, make_repo

from .building import child

WHEN = 1_800_000_000
PUSHERS = 10
KILLS = 20  # pushers killed at other moments of their copies


@pytest.fixture
def source(tmp_path: Path) -> Iterator[Repo]:
    with Repo(str(make_repo(tmp_path / "source", {"a.txt": "a\n"}))) as opened:
        yield opened


@pytest.fixture
def remote(tmp_path: Path) -> Path:
    path = tmp_path / "remote.git"
    git("init", "-q", "--bare", str(path), cwd=tmp_path)
    return path


def remote_main(remote: Path) -> str:
    return git("rev-parse", "refs/heads/main", cwd=remote)


def test_a_new_branch_lands_with_its_objects(source: Repo, remote: Path) -> None:
    start = source.head().decode()
    assert push(source, str(remote), "main", start, None) == Pushed(start)
    assert remote_main(remote) == start
    git("fsck", "--strict", "--no-dangling", cwd=remote)
    assert git("cat-file", "-p", "main:a.txt", cwd=remote) == "a"


def test_a_push_on_the_old_sha_lands_and_git_reads_it(source: Repo, remote: Path) -> None:
    start = source.head().decode()
    push(source, f"file://{remote}", "main", start, None)
    base = child(source, start, {"b.txt": "b\n"}, "base moved", at=1_700_000_002)
    push(source, str(remote), "main", base, start)
    head = child(source, start, {"c.txt": "c\n"}, "the bee's work", at=1_700_000_003)
    done = merge(source, base, head, "Merge queen-3", WHEN)
    assert isinstance(done, Merged)
    assert push(source, f"file://{remote}", "main", done.sha, base) == Pushed(done.sha)
    assert git("log", "--format=%s", "main", cwd=remote).splitlines() == [
        "Merge queen-3",
        "the bee's work",
        "base moved",
        "sample repository",
    ]
    git("fsck", "--strict", "--no-dangling", cwd=remote)
    assert git("ls-tree", "--name-only", "main", cwd=remote).split() == ["a.txt", "b.txt", "c.txt"]


def _loose(repo: Path) -> set[str]:
    objects = repo / "objects"
    return {
        d.name + f.name
        for d in objects.glob("[0-9a-f][0-9a-f]")
        for f in d.iterdir()
        if not f.name.startswith("tmp_obj_")  # a killed writer's stray
    }


def test_a_push_into_a_local_repository_writes_what_it_lacks_loose(
    source: Repo, remote: Path
) -> None:
    start = source.head().decode()
    push(source, str(remote), "main", start, None)
    packs = set((remote / "objects" / "pack").glob("*"))
    before = _loose(remote)
    head = child(source, start, {"d/e/f.txt": "f\n", "a.txt": "a2\n"}, "the bee's work")
    done = merge(source, start, head, "Merge queen-4", WHEN)
    assert isinstance(done, Merged)

    assert push(source, str(remote), "main", done.sha, start) == Pushed(done.sha)

    lacked = git("rev-list", "--objects", done.sha, f"^{start}", cwd=remote).split("\n")
    assert _loose(remote) - before == {line.split()[0] for line in lacked if line}
    assert set((remote / "objects" / "pack").glob("*")) == packs  # no pack for a push
    git("fsck", "--strict", "--no-dangling", cwd=remote)


def test_a_push_of_many_objects_into_a_local_repository_lands_one_pack(
    source: Repo, remote: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    start = source.head().decode()
    push(source, str(remote), "main", start, None)
    before = _loose(remote)
    monkeypatch.setattr(push_module, "UNPACK_LIMIT", 2)
    head = child(source, start, {f"many/f{n}.txt": f"{n}\n" for n in range(4)}, "many")

    assert push(source, str(remote), "main", head, start) == Pushed(head)

    assert _loose(remote) == before
    assert len(list((remote / "objects" / "pack").glob("*.idx"))) == 1
    git("fsck", "--strict", "--no-dangling", cwd=remote)
    assert git("cat-file", "-p", "main:many/f3.txt", cwd=remote) == "3"


_PUSHER = """
import sys
from dulwich.repo import Repo
from hive.git.push import push
source = Repo(sys.argv[1])
print("pushing", flush=True)
push(source, sys.argv[2], "main", sys.argv[3], sys.argv[4])
"""


def _reaches_only_what_is_there(remote: Path) -> None:
    """Every loose object of `remote` names only objects `remote` holds: the next copy
    stops at any object it finds there."""
    with Repo(str(remote)) as opened:
        store = opened.object_store
        for sha in _loose(remote):
            type_num, raw = store.get_raw(ObjectID(sha.encode()))
            named = localcopy._reaches(ObjectID(sha.encode()), type_num, raw)
            assert all(n in store for n in named), f"{sha} names an object not there"


def test_a_push_killed_mid_copy_leaves_no_object_without_what_it_names(
    source: Repo, remote: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Queen killed (SIGKILL) while her push copies objects into the remote one by one
    leaves it with no object that names a missing one; her next push lands whole."""
    # a kill in the ref's update leaves its lock: the next push here comes at once, not
    # the seconds later a job's next try would, so any lock left counts as stale
    monkeypatch.setattr(push_module, "STALE_LOCK_SECONDS", 0.0)
    start = source.head().decode()
    push(source, str(remote), "main", start, None)
    for kill in range(KILLS):
        files = {f"d{kill}/e{n % 7}/f{n}.txt": f"{kill} {n}\n" for n in range(80)}
        head = child(source, start, files, f"work {kill}", at=1_700_000_100 + kill)
        pusher = subprocess.Popen(
            [sys.executable, "-c", _PUSHER, str(source.path), str(remote), head, start],
            stdout=subprocess.PIPE,
        )
        assert pusher.stdout is not None
        assert pusher.stdout.readline() == b"pushing\n"
        deadline = time.monotonic() + 0.002 * kill  # killed at another moment each time
        while time.monotonic() < deadline:
            pass
        pusher.send_signal(signal.SIGKILL)
        pusher.wait()
        pusher.stdout.close()
        _reaches_only_what_is_there(remote)
        assert push(source, str(remote), "main", head, start) == Pushed(head)
        start = head
    git("fsck", "--strict", "--no-dangling", cwd=remote)
    assert remote_main(remote) == start


def test_a_stale_old_sha_is_refused_and_names_the_remote_tip(source: Repo, remote: Path) -> None:
    start = source.head().decode()
    push(source, str(remote), "main", start, None)
    first = child(source, start, {"b.txt": "first\n"})
    second = child(source, start, {"b.txt": "second\n"})
    assert push(source, str(remote), "main", first, start) == Pushed(first)
    assert push(source, str(remote), "main", second, start) == Moved(first)
    assert push(source, str(remote), "main", second, None) == Moved(first)
    assert remote_main(remote) == first


def test_a_push_that_already_landed_reports_it_landed(source: Repo, remote: Path) -> None:
    start = source.head().decode()
    push(source, str(remote), "main", start, None)
    new = child(source, start, {"b.txt": "b\n"})
    assert push(source, str(remote), "main", new, start) == Pushed(new)
    assert push(source, str(remote), "main", new, start) == Pushed(new)  # a resumed job


def test_a_missing_branch_with_an_old_sha_is_moved_to_none(source: Repo, remote: Path) -> None:
    start = source.head().decode()
    new = child(source, start, {"b.txt": "b\n"})
    assert push(source, str(remote), "main", new, start) == Moved(None)


def test_an_unreachable_remote_is_named_without_its_password(source: Repo) -> None:
    start = source.head().decode()
    with pytest.raises(PushError) as raised:
        push(source, "http://ada:s3cret@127.0.0.1:9/repo.git", "main", start, None)
    assert "s3cret" not in str(raised.value) and "127.0.0.1" in str(raised.value)
    with pytest.raises(UnsafeGitError):
        push(source, "ext::sh -c touch% /tmp/pwned", "main", start, None)
    with pytest.raises(PushError, match="not a valid branch"):
        push(source, "/nowhere", "main..x", start, None)


def test_ten_pushers_racing_each_land_once_and_none_is_lost(
    source: Repo, remote: Path, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    url = str(remote)
    push(source, url, "main", source.head().decode(), None)
    clones = [open_checkout(url, tmp_path / f"hive-{n}", "main") for n in range(PUSHERS)]
    for clone in clones:
        request.addfinalizer(clone.repo.close)
    start = threading.Barrier(PUSHERS)
    moved = [0] * PUSHERS
    failures: list[BaseException] = []

    def publish(n: int) -> None:
        try:
            repo, base = clones[n].repo, clones[n].base_sha
            head = child(repo, base, {f"issue-{n}.txt": f"work {n}\n"}, f"work {n}")
            start.wait()
            while True:
                done = merge(repo, base, head, f"Merge queen-{n}", WHEN)
                assert isinstance(done, Merged)
                landed = push(repo, url, "main", done.sha, base)
                if isinstance(landed, Pushed):
                    return
                moved[n] += 1
                base = refresh_base(repo, url, "main")
        except BaseException as err:
            failures.append(err)

    threads = [threading.Thread(target=publish, args=(n,)) for n in range(PUSHERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not failures, failures
    assert sum(moved) > 0  # they did race: someone had to merge again
    subjects = git("log", "--format=%s", "main", cwd=remote).splitlines()
    assert sorted(s for s in subjects if s.startswith("work ")) == sorted(
        f"work {n}" for n in range(PUSHERS)
    )
    names = git("ls-tree", "--name-only", "main", cwd=remote).split()
    assert names == sorted(["a.txt"] + [f"issue-{n}.txt" for n in range(PUSHERS)])
    git("fsck", "--strict", "--no-dangling", cwd=remote)


def test_over_git_daemon_a_push_lands_where_it_takes_pushes_and_a_stale_one_is_moved(
    source: Repo, remote: Path
) -> None:
    """`hive chaos --loop`'s origin: `git daemon` with receive-pack on, over the wire."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(remote.parent)}
    start = source.head().decode()
    second = child(source, start, {"b.txt": "b\n"}, "second", at=1_700_000_002)
    with GitDaemon(remote.parent, "git", env, pushes=True) as daemon:
        url = daemon.url(remote.name)
        assert push(source, url, "main", start, None) == Pushed(start)
        assert push(source, url, "main", second, start) == Pushed(second)
        third = child(source, start, {"c.txt": "c\n"}, "third", at=1_700_000_003)
        assert push(source, url, "main", third, start) == Moved(second)
    assert remote_main(remote) == second
    with GitDaemon(remote.parent, "git", env) as daemon, pytest.raises(PushError):
        push(source, daemon.url(remote.name), "main", third, second)
    assert remote_main(remote) == second


def _lock_main(remote: Path, age_seconds: float) -> Path:
    lock = remote / "refs" / "heads" / "main.lock"
    lock.write_bytes(b"")
    at = time.time() - age_seconds
    os.utime(lock, (at, at))
    return lock


def test_a_refs_lock_left_by_a_killed_writer_is_removed_and_the_push_lands(
    source: Repo, remote: Path
) -> None:
    start = source.head().decode()
    push(source, str(remote), "main", start, None)
    new = child(source, start, {"b.txt": "b\n"})
    lock = _lock_main(remote, push_module.STALE_LOCK_SECONDS + 5)
    assert push(source, str(remote), "main", new, start) == Pushed(new)
    assert not lock.exists() and remote_main(remote) == new


def test_a_fresh_refs_lock_is_another_writers_and_is_left(source: Repo, remote: Path) -> None:
    start = source.head().decode()
    push(source, str(remote), "main", start, None)
    new = child(source, start, {"b.txt": "b\n"})
    lock = _lock_main(remote, 0)
    with pytest.raises(PushError, match="locked by another update"):
        push(source, str(remote), "main", new, start)
    assert lock.exists() and remote_main(remote) == start
