"""A FIFO, a socket or a device node in a worktree is skipped by the salvage, never
opened: the work beside it is committed, and the salvage names what it skipped."""

from __future__ import annotations

import os
import socket
import stat
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from dulwich.repo import Repo

from hive.git import status
from hive.git.salvage import Salvage, salvage
from hive.git.status import SpecialFile
from hive.git.worktrees import Cut, cut_worktree

from .conftest import Git, write

DEADLINE_SECONDS = 20.0


@pytest.fixture
def cut(clone: Repo, tmp_path: Path) -> Cut:
    return cut_worktree(clone, 21, "main", tmp_path / "work")


def salvage_within_deadline(cut: Cut, boundary: list[str], fifo: Path | None = None) -> Salvage:
    """The salvage on a thread of its own: one that blocks (in open() on a FIFO) fails
    the test at the deadline instead of hanging it, and is let go by a writer."""
    done: list[Salvage | BaseException] = []

    def run() -> None:
        try:
            done.append(salvage(cut.path, boundary, "finished"))
        except BaseException as err:
            done.append(err)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(DEADLINE_SECONDS)
    if thread.is_alive() and fifo is not None:
        # let the blocked open() go: a writer that opens and closes at once
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        thread.join(DEADLINE_SECONDS)
        raise AssertionError("the salvage blocked opening the FIFO")
    assert done, "the salvage did not end"
    if isinstance(done[0], BaseException):
        raise done[0]
    return done[0]


@pytest.fixture
def listening(cut: Cut) -> Iterator[Path]:
    path = cut.path / "src" / "agent.sock"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    yield path
    server.close()


def test_a_fifo_in_the_boundary_is_skipped_and_the_work_beside_it_saved(cut: Cut, git: Git) -> None:
    write(cut.path, {"src/app.py": "print(7)\n"})
    fifo = cut.path / "src" / "pipe"
    os.mkfifo(fifo)

    result = salvage_within_deadline(cut, ["src"], fifo)

    assert result.committed == ("src/app.py",)
    assert result.skipped == ("src/pipe",)
    assert git("show", "HEAD:src/app.py", cwd=cut.path) == "print(7)\n"
    assert "src/pipe" not in git("ls-tree", "-r", "--name-only", "HEAD", cwd=cut.path)
    git("fsck", "--strict", cwd=cut.path)


def test_a_socket_in_the_boundary_is_skipped_and_the_work_beside_it_saved(
    cut: Cut, git: Git, listening: Path
) -> None:
    write(cut.path, {"src/app.py": "print(8)\n"})

    result = salvage_within_deadline(cut, ["src"])

    assert result.committed == ("src/app.py",)
    assert result.skipped == ("src/agent.sock",)
    assert git("show", "HEAD:src/app.py", cwd=cut.path) == "print(8)\n"


def test_a_device_node_in_the_boundary_is_skipped_never_read(cut: Cut, git: Git) -> None:
    node = cut.path / "src" / "null"
    try:  # the same device as /dev/null: read, it would be committed as an empty file
        os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("making a device node needs CAP_MKNOD")
    write(cut.path, {"src/app.py": "print(9)\n"})

    result = salvage_within_deadline(cut, ["src"])

    assert result.committed == ("src/app.py",)
    assert result.skipped == ("src/null",)
    assert "src/null" not in git("ls-tree", "-r", "--name-only", "HEAD", cwd=cut.path)


def test_a_tracked_file_turned_fifo_is_skipped_not_deleted(cut: Cut, git: Git) -> None:
    os.remove(cut.path / "src" / "util.py")
    os.mkfifo(cut.path / "src" / "util.py")
    write(cut.path, {"src/app.py": "print(10)\n"})

    result = salvage_within_deadline(cut, ["src"], cut.path / "src" / "util.py")

    assert result.committed == ("src/app.py",)
    assert result.skipped == ("src/util.py",)
    # HEAD keeps the file as it was: a special file is no change, not a deletion
    assert "src/util.py" in git("ls-tree", "-r", "--name-only", "HEAD", cwd=cut.path)


def test_a_fifo_outside_the_boundary_is_skipped_too(cut: Cut) -> None:
    fifo = cut.path / "outside.pipe"
    os.mkfifo(fifo)
    write(cut.path, {"src/app.py": "print(11)\n"})

    result = salvage_within_deadline(cut, ["src"], fifo)

    assert result.committed == ("src/app.py",)
    assert result.skipped == ("outside.pipe",)
    assert result.outside == ()


def test_reading_a_fifo_as_a_blob_is_refused_unopened(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(SpecialFile, match="not a regular file"):
        status.read_blob(str(fifo), os.lstat(fifo))


def test_a_file_swapped_for_a_fifo_after_its_stat_is_refused_not_waited_on(
    tmp_path: Path,
) -> None:
    plain = tmp_path / "plain"
    plain.write_text("x")
    seen = os.lstat(plain)  # what the walk saw
    plain.unlink()
    os.mkfifo(plain)  # what is there when it is read
    with pytest.raises(SpecialFile, match="not a regular file"):
        status.read_blob(str(plain), seen)


def test_an_ignored_fifo_is_not_named(cut: Cut) -> None:
    write(cut.path, {".gitignore": "*.pipe\n", "src/app.py": "print(12)\n"})
    os.mkfifo(cut.path / "src" / "x.pipe")

    result = salvage_within_deadline(cut, ["src"], cut.path / "src" / "x.pipe")

    assert (result.committed, result.skipped) == (("src/app.py",), ())
