"""A runner's bounded poll moves by up to a tenth either way, where its draw falls."""

import pytest

from hive.rules.jitter import POLL_JITTER, jittered


def test_a_draw_spreads_the_poll_a_tenth_either_way() -> None:
    assert POLL_JITTER == 0.1
    assert jittered(15.0, 0.0) == pytest.approx(13.5)
    assert jittered(15.0, 0.5) == pytest.approx(15.0)
    assert jittered(15.0, 1.0) == pytest.approx(16.5)
    assert jittered(15.0, 0.25, fraction=0.0) == 15.0
    assert jittered(0.0, 0.9) == 0.0


@pytest.mark.parametrize(
    ("seconds", "draw", "fraction", "says"),
    [
        (15.0, -0.1, 0.1, "a jitter draw is from 0 to 1, not -0.1"),
        (15.0, 1.5, 0.1, "a jitter draw is from 0 to 1, not 1.5"),
        (15.0, 0.5, 1.0, "a jitter fraction is from 0 to below 1, not 1.0"),
        (15.0, 0.5, -0.2, "a jitter fraction is from 0 to below 1, not -0.2"),
        (-1.0, 0.5, 0.1, "a poll cannot wait -1.0 s"),
    ],
)
def test_a_draw_or_a_fraction_out_of_range_is_refused(
    seconds: float, draw: float, fraction: float, says: str
) -> None:
    with pytest.raises(ValueError, match=f"^{says}$"):
        jittered(seconds, draw, fraction)
