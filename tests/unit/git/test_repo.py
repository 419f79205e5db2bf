from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from dulwich.objects import ObjectID
from dulwich.refs import Ref

import hive.git.repo as repo_module
from hive.git.repo import (
    GitError,
    open_checkout,
    origin_of,
    redact,
    refresh_base,
    resolve,
    set_ref,
)

from .conftest import Git, head_of, write

KILLS = 20  # writers killed at other moments of their writes


def test_open_clones_once_then_reopens_and_refreshes_base(
    tmp_path: Path, upstream: Path, git: Git
) -> None:
    first = open_checkout(str(upstream), tmp_path / "work", "main")
    assert first.base_sha == head_of(git, upstream, "main")
    assert (tmp_path / "work" / "repo.git" / "HEAD").exists()

    write(upstream, {"later.txt": "later\n"})
    git("add", ".", cwd=upstream)
    git("commit", "-qm", "later", cwd=upstream)
    again = open_checkout(f"file://{upstream}", tmp_path / "work", "main")

    assert again.base_sha == head_of(git, upstream, "main") != first.base_sha
    assert resolve(again.repo, "main") == again.base_sha
    git("fsck", "--strict", cwd=Path(again.repo.path))


def test_a_missing_base_branch_is_named(tmp_path: Path, upstream: Path) -> None:
    with pytest.raises(GitError, match=r"has no branch 'trunk' \(HIVE_BASE_REF\)"):
        open_checkout(str(upstream), tmp_path / "work", "trunk")


def test_an_unreachable_repository_is_one_clear_line(tmp_path: Path) -> None:
    with pytest.raises(GitError, match="cannot fetch main from") as caught:
        open_checkout(str(tmp_path / "nowhere"), tmp_path / "work", "main")
    assert "\n" not in str(caught.value)


def test_a_workdir_holding_something_else_is_refused(tmp_path: Path, upstream: Path) -> None:
    (tmp_path / "work" / "repo.git").mkdir(parents=True)
    with pytest.raises(GitError, match="is not a git repository: move it away"):
        open_checkout(str(upstream), tmp_path / "work", "main")


def test_a_workdir_cloned_from_another_repository_is_refused(
    tmp_path: Path, upstream: Path, git: Git
) -> None:
    open_checkout(str(upstream), tmp_path / "work", "main").repo.close()
    other = tmp_path / "other"
    git("clone", "-q", str(upstream), str(other), cwd=tmp_path)
    with pytest.raises(GitError, match=f"is a clone of {upstream}, not {other}"):
        open_checkout(str(other), tmp_path / "work", "main")


def test_the_recorded_origin_carries_no_credential() -> None:
    assert (
        origin_of("https://bee:s3cret@example.com:8443/r.git") == "https://example.com:8443/r.git"
    )
    assert origin_of("file:///srv/r/../r") == "/srv/r"


def test_a_fetch_error_names_the_origin_without_the_password(tmp_path: Path) -> None:
    url = "http://ada:s3cret@127.0.0.1:9/repo.git"
    with pytest.raises(GitError) as caught:
        open_checkout(url, tmp_path / "work", "main")
    assert "s3cret" not in str(caught.value)
    assert "cannot fetch main from http://127.0.0.1:9/repo.git" in str(caught.value)


def test_redact_hides_the_password_in_every_form_and_a_token_user() -> None:
    said = "GET https://ada:p%40ss@x.org/r failed for ada with p@ss, https://x.org/r"
    assert redact(said, "https://ada:p%40ss@x.org/r") == (
        "GET https://x.org/r failed for ada with ***, https://x.org/r"
    )
    assert redact("no ghp_token123 here", "https://ghp_token123@x.org/r") == "no *** here"
    assert redact("plain", "/srv/repo") == "plain"


def test_a_base_refresh_waits_for_another_writer_of_the_ref(
    tmp_path: Path, upstream: Path, git: Git, caplog: pytest.LogCaptureFixture
) -> None:
    """Two writers of refs/remotes/origin/main (the Queen's refresh, a publish step's own
    Repo): dulwich refuses a held lock at once; the refresh waits for it instead."""
    checkout = open_checkout(str(upstream), tmp_path / "work", "main")
    write(upstream, {"later.txt": "later\n"})
    git("add", ".", cwd=upstream)
    git("commit", "-qm", "later", cwd=upstream)
    lock = Path(checkout.repo.path) / "refs" / "remotes" / "origin" / "main.lock"
    lock.write_bytes(b"")  # the other writer, mid-write
    waiting = threading.Event()

    class Seen(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if "being written by another writer" in record.getMessage():
                waiting.set()

    seen = Seen()
    logging.getLogger("hive.git").addHandler(seen)
    logging.getLogger("hive.git").setLevel(logging.INFO)
    done: list[str | BaseException] = []

    def refresh() -> None:
        try:
            done.append(refresh_base(checkout.repo, str(upstream), "main"))
        except BaseException as err:  # the test reads it below
            done.append(err)

    worker = threading.Thread(target=refresh)
    worker.start()
    try:
        assert waiting.wait(30), "the refresh never waited for the lock"
        lock.unlink()  # the other writer is done
        worker.join(30)
    finally:
        logging.getLogger("hive.git").removeHandler(seen)
    assert done == [head_of(git, upstream, "main")]
    assert resolve(checkout.repo, "refs/remotes/origin/main") == done[0]


def test_a_lock_left_by_a_writer_killed_mid_write_is_removed(
    tmp_path: Path, upstream: Path, git: Git, caplog: pytest.LogCaptureFixture
) -> None:
    """A Queen killed by SIGKILL inside a ref write leaves `<ref>.lock`; her replacement
    on the same clone must still boot."""
    checkout = open_checkout(str(upstream), tmp_path / "work", "main")
    write(upstream, {"later.txt": "later\n"})
    git("add", ".", cwd=upstream)
    git("commit", "-qm", "later", cwd=upstream)
    lock = Path(checkout.repo.path) / "refs" / "remotes" / "origin" / "main.lock"
    lock.write_bytes(b"")
    old = time.time() - repo_module.REF_LOCK_STALE_SECONDS - 1
    os.utime(lock, (old, old))
    with caplog.at_level(logging.WARNING, "hive.git"):
        sha = refresh_base(checkout.repo, str(upstream), "main")
    assert sha == head_of(git, upstream, "main")
    assert not lock.exists()
    assert "a writer that died mid-write left it" in caplog.text


def test_a_lock_held_too_long_is_named(
    tmp_path: Path, upstream: Path, git: Git, monkeypatch: pytest.MonkeyPatch
) -> None:
    checkout = open_checkout(str(upstream), tmp_path / "work", "main")
    write(upstream, {"later.txt": "later\n"})
    git("add", ".", cwd=upstream)
    git("commit", "-qm", "later", cwd=upstream)
    lock = Path(checkout.repo.path) / "refs" / "remotes" / "origin" / "main.lock"
    lock.write_bytes(b"")
    monkeypatch.setattr(repo_module, "REF_LOCK_WAIT_SECONDS", 0.05)
    monkeypatch.setattr(repo_module, "REF_LOCK_STALE_SECONDS", 3600.0)
    with pytest.raises(GitError, match=r"main\.lock stayed for 0\.05 s: another writer"):
        refresh_base(checkout.repo, str(upstream), "main")
    assert lock.exists()


def test_a_refresh_of_a_base_that_did_not_move_writes_no_ref(
    tmp_path: Path, upstream: Path, git: Git
) -> None:
    checkout = open_checkout(str(upstream), tmp_path / "work", "main")
    ref_file = Path(checkout.repo.path) / "refs" / "remotes" / "origin" / "main"
    before = ref_file.stat()
    assert refresh_base(checkout.repo, str(upstream), "main") == head_of(git, upstream, "main")
    assert ref_file.stat().st_ino == before.st_ino  # not replaced: no write, no sync
    write(upstream, {"later.txt": "later\n"})
    git("add", ".", cwd=upstream)
    git("commit", "-qm", "later", cwd=upstream)
    assert refresh_base(checkout.repo, str(upstream), "main") == head_of(git, upstream, "main")
    assert ref_file.read_text().strip() == head_of(git, upstream, "main")


def test_a_remote_tracking_ref_is_written_without_a_sync_and_a_branch_with_one(
    tmp_path: Path, upstream: Path, git: Git, monkeypatch: pytest.MonkeyPatch
) -> None:
    checkout = open_checkout(str(upstream), tmp_path / "work", "main")
    synced: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd))[1])
    write(upstream, {"later.txt": "later\n"})
    git("add", ".", cwd=upstream)
    git("commit", "-qm", "later", cwd=upstream)

    tip = refresh_base(checkout.repo, str(upstream), "main")

    assert synced == []  # fetched again after a crash: no sync
    ref_file = Path(checkout.repo.path) / "refs" / "remotes" / "origin" / "main"
    assert ref_file.read_text() == tip + "\n"
    assert resolve(checkout.repo, "refs/remotes/origin/main") == tip
    git("fsck", "--strict", cwd=Path(checkout.repo.path))
    set_ref(checkout.repo, Ref(b"refs/heads/queen-1"), ObjectID(tip.encode()))
    assert len(synced) == 1  # a branch that may hold a bee's work is synced
    checkout.repo.close()


_WRITER = """
import sys
from dulwich.objects import ObjectID
from dulwich.refs import Ref
from dulwich.repo import Repo
from hive.git.repo import set_ref
repo = Repo(sys.argv[1])
shas = [ObjectID(s.encode()) for s in sys.argv[2:4]]
print("writing", flush=True)
n = 0
while True:
    set_ref(repo, Ref(b"refs/remotes/origin/main"), shas[n % 2], synced=False)
    n += 1
"""


def test_an_unsynced_ref_write_killed_by_sigkill_leaves_the_old_or_the_new_sha(
    tmp_path: Path, upstream: Path, git: Git, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A process killed (SIGKILL) at any moment of its unsynced ref writes leaves the ref
    naming one of the two commits, never a torn file, and the next writer goes on."""
    checkout = open_checkout(str(upstream), tmp_path / "work", "main")
    shas = [head_of(git, upstream, "main~1"), head_of(git, upstream, "main")]
    ref_file = Path(checkout.repo.path) / "refs" / "remotes" / "origin" / "main"
    lock = ref_file.with_name("main.lock")
    monkeypatch.setattr(repo_module, "REF_LOCK_STALE_SECONDS", 0.0)
    for kill in range(KILLS):
        writer = subprocess.Popen(
            [sys.executable, "-c", _WRITER, checkout.repo.path, *shas],
            stdout=subprocess.PIPE,
        )
        assert writer.stdout is not None
        assert writer.stdout.readline() == b"writing\n"
        # the writer is killed a little later each time: at other points of a write
        deadline = time.monotonic() + 0.001 * kill
        while time.monotonic() < deadline:
            pass
        writer.send_signal(signal.SIGKILL)
        writer.wait()
        writer.stdout.close()
        assert ref_file.read_text() in {shas[0] + "\n", shas[1] + "\n"}
        if lock.exists():  # killed inside the write: its lock is stale to the next one
            old = time.time() - 1
            os.utime(lock, (old, old))
        left = resolve(checkout.repo, "refs/remotes/origin/main")
        other = shas[1] if left == shas[0] else shas[0]
        set_ref(checkout.repo, Ref(b"refs/remotes/origin/main"), ObjectID(other.encode()))
        assert ref_file.read_text() == other + "\n" and not lock.exists()
    checkout.repo.close()
