from hypothesis import given
from hypothesis import strategies as st

from hive.rules.refusals import (
    no_runner_sentence,
    refusal_sentence,
    refused_everywhere,
    waits_for_no_runner,
)


def test_an_order_every_live_runner_refused_ends_after_the_window():
    assert refused_everywhere(["r1", "r2"], {"r1", "r2"}, 600, 600)
    assert not refused_everywhere(["r1", "r2"], {"r1", "r2"}, 599, 600)


def test_a_live_runner_that_has_not_refused_keeps_the_order_queued():
    assert not refused_everywhere(["r1"], {"r1", "r2"}, 10_000, 600)


def test_an_order_nobody_refused_is_never_ended_here():
    assert not refused_everywhere([], set(), 10_000, 600)
    assert not refused_everywhere([], {"r1"}, 10_000, 600)


def test_refusers_that_are_gone_still_count_when_no_runner_is_left():
    assert refused_everywhere(["r1"], set(), 600, 600)


def test_the_sentence_names_the_refusing_runners_once_each_and_the_key():
    assert refusal_sentence(["r1", "r2", "r1"], 1) == (
        "every runner refused it (r1, r2): none has key #1; give a runner that key, "
        "or the Queen fewer keys"
    )


def test_a_long_list_of_runners_is_cut():
    sentence = refusal_sentence([f"r{i}" for i in range(9)], 0)
    assert "(r0, r1, r2, r3, r4 and 4 more)" in sentence


@given(
    refused=st.lists(st.sampled_from("abcd"), max_size=6),
    live=st.sets(st.sampled_from("abcde")),
    queued=st.floats(0, 2000),
)
def test_an_order_ends_only_when_every_live_runner_refused_it(refused, live, queued):
    if refused_everywhere(refused, live, queued, 600):
        assert refused and queued >= 600 and all(r in refused for r in live)


def test_an_order_waits_for_no_runner_once_none_was_seen_in_the_window() -> None:
    assert waits_for_no_runner([], set(), 61, 60)
    assert not waits_for_no_runner([], set(), 59, 60)  # the window is not over
    assert not waits_for_no_runner([], {"runner-a"}, 61, 60)  # one is there to take it
    assert not waits_for_no_runner(["runner-a"], set(), 61, 60)  # refused: it ends instead


def test_the_no_runner_sentence_names_the_issues_and_what_would_help() -> None:
    assert no_runner_sentence([3, 4], 60) == (
        "#3, #4 queued for a runner, and no runner has been seen for 60 s: start one "
        "(hive serve with HIVE_ROLE=runner and the keys) to take them"
    )
    assert no_runner_sentence(list(range(1, 8)), 30).startswith("#1, #2, #3, #4, #5 and 2 more")
