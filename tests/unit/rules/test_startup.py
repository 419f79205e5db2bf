import pytest

from hive.rules.startup import (
    FIRST_PAUSE_SECONDS,
    MAX_PAUSE_SECONDS,
    STORE_WAIT_DEFAULT_SECONDS,
    store_wait_pause,
)


@pytest.mark.parametrize(
    ("failed", "left", "pause"),
    [
        (1, 60.0, 0.5),
        (2, 60.0, 1.0),
        (3, 60.0, 2.0),
        (4, 60.0, 4.0),
        (5, 60.0, 5.0),  # capped
        (40, 60.0, 5.0),  # a long wait stays at the cap, no overflow
        (3, 0.7, 0.7),  # never past the time left
        (1, 0.0, None),  # no time left: give up
        (1, -1.0, None),
    ],
)
def test_the_pause_doubles_to_its_cap_within_the_time_left(failed, left, pause):
    assert store_wait_pause(failed, left) == pause


def test_attempts_are_counted_from_one():
    with pytest.raises(ValueError, match="counted from 1"):
        store_wait_pause(0, 10.0)


def test_the_constants():
    assert (FIRST_PAUSE_SECONDS, MAX_PAUSE_SECONDS, STORE_WAIT_DEFAULT_SECONDS) == (0.5, 5.0, 60)
