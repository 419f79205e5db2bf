"""The checkout's writer thread holds at most a bounded amount of file data waiting."""

from __future__ import annotations

import os
from pathlib import Path

from hive.git import checkout
from hive.git.index import IndexFile


def test_the_writer_takes_more_data_only_within_its_bound(tmp_path: Path) -> None:
    writer = checkout._Writer(os.open(tmp_path, os.O_RDONLY), IndexFile(tmp_path / "index"))
    half = checkout._QUEUED_BYTES // 2
    assert writer.has_room(checkout._QUEUED_BYTES * 4)  # one file alone, however large

    writer.put(checkout._Make(0, b"a", 0o100644, b"0" * 40, b"a", b"x" * half, 0))

    assert writer.has_room(half) and not writer.has_room(half + 1)
    writer.put(None)
    writer.run()
    assert (tmp_path / "a").stat().st_size == half
