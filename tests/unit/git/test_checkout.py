"""The checkout's writer threads have at most a bounded amount of file data waiting."""

from __future__ import annotations

from hive.git import checkout


def test_the_writers_are_given_more_data_only_within_the_bound() -> None:
    queue = checkout._Queue(2)
    half = checkout._QUEUED_BYTES // 2
    assert queue.has_room(checkout._QUEUED_BYTES * 4)  # one file alone, however large

    queue.put(0, checkout._Make(b"", b"a", 0o100644, b"0" * 40, b"a", b"x" * half))

    assert queue.has_room(half) and not queue.has_room(half + 1)
    assert queue.take(0) is not None
    assert queue.has_room(checkout._QUEUED_BYTES * 4)
    queue.finish()
    assert queue.take(1) is None
