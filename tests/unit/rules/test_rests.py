"""A key's rest after a refusal (RULES 7), decided at each ending, as vectors."""

from datetime import UTC, datetime, timedelta

import pytest

from hive.rules.outcome_codes import OutcomeCode
from hive.rules.rests import (
    NO_REST,
    QUOTA_RESET_MAX_SECONDS,
    QUOTA_REST_SECONDS,
    KeyEnding,
    Rest,
    moves_rest,
    rest_after,
    seconds_left,
)

AT = datetime(2026, 12, 1, 4, 0, tzinfo=UTC)


def s(seconds: float) -> datetime:
    return AT + timedelta(seconds=seconds)


def test_transient_refusals_in_a_row_rest_5_s_doubling_to_300_s() -> None:
    rest = NO_REST
    seen = []
    for _ in range(8):
        rest = rest_after(Rest(rest.strikes), KeyEnding(OutcomeCode.REFUSED), AT)
        seen.append((rest.strikes, (rest.until - AT).total_seconds()))  # type: ignore[operator]
    assert seen == [(1, 5), (2, 10), (3, 20), (4, 40), (5, 80), (6, 160), (7, 300), (8, 300)]


def test_a_quota_rests_until_the_reported_reset_when_it_lies_ahead() -> None:
    assert rest_after(NO_REST, KeyEnding(OutcomeCode.QUOTA_EXHAUSTED, s(1800)), AT) == Rest(
        1, s(1800)
    )


@pytest.mark.parametrize(
    "reset",
    [None, s(0), s(-60), s(QUOTA_RESET_MAX_SECONDS + 1)],  # none, past, now, beyond belief
)
def test_a_quota_without_a_believable_reset_rests_for_the_configured_rest(reset) -> None:
    assert rest_after(NO_REST, KeyEnding(OutcomeCode.QUOTA_EXHAUSTED, reset), AT) == Rest(
        1, s(QUOTA_REST_SECONDS)
    )
    ending = KeyEnding(OutcomeCode.QUOTA_EXHAUSTED, reset, quota_rest_seconds=60)
    assert rest_after(NO_REST, ending, AT) == Rest(1, s(60))


def test_a_reset_a_week_away_is_still_believed() -> None:
    far = s(QUOTA_RESET_MAX_SECONDS)
    assert rest_after(NO_REST, KeyEnding(OutcomeCode.QUOTA_EXHAUSTED, far), AT) == Rest(1, far)


def test_a_refusal_never_shortens_a_longer_rest() -> None:
    quota = Rest(1, s(3600))
    assert rest_after(quota, KeyEnding(OutcomeCode.REFUSED), AT) == Rest(2, s(3600))
    assert rest_after(Rest(3, s(20)), KeyEnding(OutcomeCode.REFUSED), AT) == Rest(4, s(40))


@pytest.mark.parametrize(
    "code",
    [c for c in OutcomeCode if c not in (OutcomeCode.REFUSED, OutcomeCode.QUOTA_EXHAUSTED)],
)
def test_any_other_ending_ends_the_run_and_the_rest(code: OutcomeCode) -> None:
    assert not moves_rest(code)
    assert rest_after(Rest(5, s(300)), KeyEnding(code), AT) == NO_REST


def test_only_the_two_refusal_codes_move_a_rest_and_the_reason_is_their_sentence() -> None:
    assert moves_rest(OutcomeCode.REFUSED) and moves_rest(OutcomeCode.QUOTA_EXHAUSTED)
    assert KeyEnding(OutcomeCode.QUOTA_EXHAUSTED).reason == "quota exhausted"
    assert KeyEnding(OutcomeCode.REFUSED).reason == "refused"
    # the sentence is for people: it moves no rest
    assert not moves_rest("quota exhausted")  # type: ignore[arg-type]


def test_seconds_left_is_at_least_one_while_resting_and_zero_once_over() -> None:
    assert seconds_left(s(0.2), AT) == 1
    assert seconds_left(s(299.9), AT) == 299
    assert seconds_left(AT, AT) == 0
    assert seconds_left(s(-5), AT) == 0
