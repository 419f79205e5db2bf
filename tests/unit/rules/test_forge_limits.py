"""GitHub's limits: when a response is waited out, for how long, and when the client
gives up; a missing permission named; the Link header's next page."""

from __future__ import annotations

import pytest

from hive.rules.forge_limits import (
    MAX_PAUSE_SECONDS,
    MAX_TRIES,
    SECONDARY_FIRST_SECONDS,
    SERVER_FIRST_SECONDS,
    Pause,
    holds_every_request,
    missing_permission,
    next_link,
    pace_seconds,
    pause_of,
    wait_after,
)

NOW = 1_700_000_000.0


def test_an_answer_is_not_waited_out():
    assert wait_after(200, {}, "", now_epoch=NOW, tries=1) is None
    assert wait_after(404, {}, "Not Found", now_epoch=NOW, tries=1) is None
    assert wait_after(422, {}, "Validation Failed", now_epoch=NOW, tries=1) is None
    # a 403 that is no limit: a permission
    assert (
        wait_after(403, {"x-ratelimit-remaining": "4000"}, "nope", now_epoch=NOW, tries=1) is None
    )


def test_a_primary_limit_waits_until_the_reset():
    headers = {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": str(int(NOW) + 120)}
    wait = wait_after(403, headers, "API rate limit exceeded", now_epoch=NOW, tries=1)
    assert wait is not None and wait.why == Pause.PRIMARY and wait.seconds == 120
    assert wait_after(429, headers, "", now_epoch=NOW, tries=1).seconds == 120  # type: ignore[union-attr]


def test_a_reset_in_the_past_still_pauses_a_second():
    headers = {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(NOW) - 5)}
    assert wait_after(403, headers, "", now_epoch=NOW, tries=1).seconds == 1.0  # type: ignore[union-attr]


def test_a_secondary_limit_honours_retry_after():
    wait = wait_after(403, {"Retry-After": "7"}, "", now_epoch=NOW, tries=1)
    assert wait is not None and wait.why == Pause.SECONDARY and wait.seconds == 7


def test_a_secondary_limit_without_retry_after_waits_a_minute_doubling():
    msg = "You have exceeded a secondary rate limit"
    seconds = [wait_after(403, {}, msg, now_epoch=NOW, tries=t).seconds for t in (1, 2, 3)]  # type: ignore[union-attr]
    assert seconds == [
        SECONDARY_FIRST_SECONDS,
        2 * SECONDARY_FIRST_SECONDS,
        4 * SECONDARY_FIRST_SECONDS,
    ]
    assert pause_of(429, {}, "") == Pause.SECONDARY


def test_a_secondary_limit_with_nothing_remaining_waits_for_the_reset():
    headers = {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(NOW) + 30)}
    wait = wait_after(403, headers, "secondary rate limit", now_epoch=NOW, tries=1)
    assert wait is not None and wait.why == Pause.SECONDARY and wait.seconds == 30


def test_a_server_error_is_sent_again_doubling_then_given_up():
    waits = [wait_after(502, {}, "", now_epoch=NOW, tries=t) for t in range(1, MAX_TRIES + 1)]
    assert [w.seconds for w in waits] == [SERVER_FIRST_SECONDS * 2**i for i in range(MAX_TRIES)]  # type: ignore[union-attr]
    assert [w.give_up for w in waits] == [False] * (MAX_TRIES - 1) + [True]  # type: ignore[union-attr]


def test_no_pause_is_longer_than_the_cap():
    headers = {"retry-after": "999999"}
    assert wait_after(429, headers, "", now_epoch=NOW, tries=1).seconds == MAX_PAUSE_SECONDS  # type: ignore[union-attr]
    assert wait_after(500, {}, "", now_epoch=NOW, tries=40).seconds == MAX_PAUSE_SECONDS  # type: ignore[union-attr]


@pytest.mark.parametrize("bad", ["soon", "-3", "nan", ""])
def test_a_malformed_retry_after_falls_back_to_the_minute(bad):
    wait = wait_after(429, {"retry-after": bad}, "", now_epoch=NOW, tries=1)
    assert wait is not None and wait.seconds == SECONDARY_FIRST_SECONDS


def test_pace_spreads_the_last_requests_over_the_time_to_the_reset():
    assert (
        pace_seconds(
            {"x-ratelimit-remaining": "4000", "x-ratelimit-reset": str(int(NOW) + 600)},
            now_epoch=NOW,
        )
        == 0
    )
    headers = {"x-ratelimit-remaining": "10", "x-ratelimit-reset": str(int(NOW) + 600)}
    assert pace_seconds(headers, now_epoch=NOW) == 60
    assert pace_seconds({}, now_epoch=NOW) == 0


def test_a_missing_permission_is_named():
    fine = {"X-Accepted-GitHub-Permissions": "pull_requests=write"}
    assert "pull_requests=write" in (missing_permission(403, fine, "Resource not accessible") or "")
    assert "pull_requests=write" in (missing_permission(404, fine, "Not Found") or "")
    classic = {"x-accepted-oauth-scopes": "repo"}
    assert "scope repo" in (missing_permission(403, classic, "") or "")
    assert missing_permission(403, {}, "Resource not accessible by integration") is not None
    assert missing_permission(404, {}, "Not Found") is None
    assert missing_permission(422, fine, "") is None
    # a limit is a pause, not a permission
    assert missing_permission(403, {**fine, "retry-after": "3"}, "") is None


def test_the_next_link_is_found_among_the_others():
    api = "https://api.github.com/x"
    link = f'<{api}?page=2>; rel="next", <{api}?page=5>; rel="last"'
    assert next_link(link) == "https://api.github.com/x?page=2"
    last = f'<{api}?page=1>; rel="first", <{api}?page=4>; rel="prev"'
    assert next_link(last) is None
    assert next_link(None) is None
    assert next_link("garbage") is None


@pytest.mark.parametrize(
    ("why", "holds"),
    [
        (Pause.PRIMARY, True),
        (Pause.SECONDARY, True),
        (Pause.SERVER, False),
        (Pause.NONE, False),
    ],
)
def test_a_rate_limit_holds_every_request_of_the_token_and_a_server_error_only_its_own(
    why: Pause, holds: bool
) -> None:
    assert holds_every_request(why) is holds
