from __future__ import annotations

import pytest

from hive.rules.fence import FENCE_MIN_BEATS, FENCE_SHARE, turn_fence_seconds


@pytest.mark.parametrize(
    ("silent", "beat", "fence"),
    [
        (600.0, 15.0, 480.0),  # the defaults: ten minutes, a beat every 15 s
        (6.0, 0.2, 4.8),  # the chaos run's short clocks
        (6.0, 1.6, 4.8),  # three beats fit exactly
        (6.0, 1.7, None),  # they do not: no fence rather than a healthy turn killed
        (3.0, 15.0, None),
    ],
)
def test_the_fence_falls_inside_the_silent_window(
    silent: float, beat: float, fence: float | None
) -> None:
    got = turn_fence_seconds(silent, beat)
    if fence is None:
        assert got is None
    else:
        assert got == pytest.approx(fence)
        assert got < silent and got >= FENCE_MIN_BEATS * beat


def test_the_share_leaves_room_before_the_reaper() -> None:
    assert 0.5 <= FENCE_SHARE < 1.0
