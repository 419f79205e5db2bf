"""The chat's rules (seed module 8): who is called, the chain three bot messages deep,
the clocks."""

import pytest

from hive.rules.chat import (
    CHAIN_HOLD_MAX_SECONDS,
    CHAIN_MAX_BOT_MESSAGES,
    HOLD_MAX_SECONDS,
    Bot,
    Clocks,
    Kind,
    Pending,
    answer_depth,
    called,
    calls_further,
    depth_of,
    expired,
    issue_of,
    kind_of,
    next_turn,
    one_line,
)

QUEEN = Bot("@queen:hs", "Queen")
REVIEWER = Bot("@reviewer:hs", "Reviewer")
CLAUDE = Bot("@claude:hs", "claude")
BOTS = (QUEEN, REVIEWER, CLAUDE)


# ---- who is called ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("@queen:hs why has #7 not started?", ("@queen:hs",)),
        ("Queen: why has #7 not started?", ("@queen:hs",)),
        ("  queen, what runs?", ("@queen:hs",)),
        ("what does @Reviewer think of #12?", ("@reviewer:hs",)),
        ("@claude why did you touch app.py in #12", ("@claude:hs",)),
        ("@queen:hs and @reviewer:hs both", ("@queen:hs", "@reviewer:hs")),
        ("the Queen said so", ()),
        ("Queenie: hello", ()),
        ("email@queen.example", ()),
        ("@queen:hsx is another", ()),
        ("(@queen:hs)", ("@queen:hs",)),
        ("@Queen: what runs?", ("@queen:hs",)),
        ("@queens are many", ()),
        ("queen is here", ()),
        ("", ()),
    ],
)
def test_a_person_calls_a_bot_by_id_at_name_or_opening_name(body, expected):
    assert called(body, (), BOTS, by_person=True) == expected


def test_a_person_calls_a_bot_by_the_messages_mentions():
    assert called("hello", ["@reviewer:hs"], BOTS, by_person=True) == ("@reviewer:hs",)


def test_a_bot_calls_another_only_by_its_id_or_mentions():
    assert called("Reviewer: what of #3?", (), BOTS, by_person=False, sender="@queen:hs") == ()
    assert called("ask @Reviewer", (), BOTS, by_person=False, sender="@queen:hs") == ()
    got = called("ask @reviewer:hs", (), BOTS, by_person=False, sender="@queen:hs")
    assert got == ("@reviewer:hs",)
    got = called("ask", ["@claude:hs"], BOTS, by_person=False, sender="@queen:hs")
    assert got == ("@claude:hs",)


def test_a_bot_never_calls_itself():
    assert called("I, @queen:hs, say", (), BOTS, by_person=False, sender="@queen:hs") == ()


def test_a_bot_without_a_display_name_is_called_by_its_id_only():
    bots = (Bot("@bee:hs"),)
    assert called(": hello", (), bots, by_person=True) == ()
    assert called("@bee:hs hello", (), bots, by_person=True) == ("@bee:hs",)


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("why #12?", 12),
        ("#3 then #4", 3),
        ("issue#5", None),
        ("&#39; is a quote", None),
        ("##6", None),
        ("#0 and #8", 8),
        ("#99999999999", None),
        ("#2147483647", 2147483647),
        ("#2147483648", None),
        ("no issue here", None),
    ],
)
def test_the_issue_a_message_names(body, expected):
    assert issue_of(body) == expected


# ---- the chain (the card: three bot messages deep) -------------------------------------


def test_the_card_a_chain_stops_three_bot_messages_after_the_last_persons():
    assert CHAIN_MAX_BOT_MESSAGES == 3
    person = depth_of(True, None)
    first = depth_of(False, answer_depth(person))
    second = depth_of(False, answer_depth(first))
    third = depth_of(False, answer_depth(second))
    assert (person, first, second, third) == (0, 1, 2, 3)
    assert calls_further(person) and calls_further(first) and calls_further(second)
    assert not calls_further(third)


def test_a_person_starts_the_chain_again_whatever_came_before():
    assert depth_of(True, 3) == 0


def test_a_bot_message_carrying_no_depth_or_a_nonsense_one_calls_no_one():
    assert not calls_further(depth_of(False, None))
    assert not calls_further(depth_of(False, 0))
    assert not calls_further(depth_of(False, -5))


def test_an_answer_to_a_person_is_owed_to_the_person_and_to_a_bot_is_a_chain():
    assert kind_of(True) == Kind.ANSWER
    assert kind_of(False) == Kind.CHAIN


# ---- the clocks --------------------------------------------------------------------------


def test_held_messages_are_dropped_after_their_kinds_bound():
    assert not expired(Kind.ANSWER, HOLD_MAX_SECONDS - 0.001)
    assert expired(Kind.ANSWER, HOLD_MAX_SECONDS)
    assert expired(Kind.MOVE, HOLD_MAX_SECONDS)
    assert not expired(Kind.CHAIN, CHAIN_HOLD_MAX_SECONDS - 0.001)
    assert expired(Kind.CHAIN, CHAIN_HOLD_MAX_SECONDS)


CLOCKS = Clocks(gap_seconds=2.0, per_minute=3)


def test_nothing_pending_sends_nothing():
    turn = next_turn([], 100.0, {}, [], CLOCKS)
    assert turn.send is None and turn.drop == () and turn.wait_seconds == 0.0


def test_a_person_is_answered_before_a_move_and_a_move_before_a_chain():
    chain = Pending(1, "@reviewer:hs", Kind.CHAIN, 10.0)
    move = Pending(2, "@queen:hs", Kind.MOVE, 11.0)
    answer = Pending(3, "@claude:hs", Kind.ANSWER, 12.0)
    assert next_turn([chain, move, answer], 20.0, {}, [], CLOCKS).send == answer
    assert next_turn([chain, move], 20.0, {}, [], CLOCKS).send == move


def test_oldest_first_within_a_kind():
    older = Pending(7, "@queen:hs", Kind.ANSWER, 10.0)
    newer = Pending(5, "@reviewer:hs", Kind.ANSWER, 11.0)
    assert next_turn([newer, older], 20.0, {}, [], CLOCKS).send == older


def test_a_bot_waits_its_gap_and_another_bot_goes_meanwhile():
    queen = Pending(1, "@queen:hs", Kind.ANSWER, 10.0)
    reviewer = Pending(2, "@reviewer:hs", Kind.ANSWER, 11.0)
    turn = next_turn([queen, reviewer], 20.0, {"@queen:hs": 19.0}, [19.0], CLOCKS)
    assert turn.send == reviewer
    turn = next_turn([queen], 20.0, {"@queen:hs": 19.0}, [19.0], CLOCKS)
    assert turn.send is None and turn.wait_seconds == pytest.approx(1.0)
    assert next_turn([queen], 21.0, {"@queen:hs": 19.0}, [19.0], CLOCKS).send == queen


def test_nothing_bot_to_bot_goes_while_a_person_waits():
    answer = Pending(1, "@queen:hs", Kind.ANSWER, 10.0)
    chain = Pending(2, "@reviewer:hs", Kind.CHAIN, 5.0)
    turn = next_turn([answer, chain], 20.0, {"@queen:hs": 19.5}, [19.5], CLOCKS)
    assert turn.send is None and turn.wait_seconds == pytest.approx(1.5)


def test_the_room_takes_at_most_its_cap_a_minute():
    answer = Pending(1, "@claude:hs", Kind.ANSWER, 10.0)
    sent = [40.0, 50.0, 60.0, 5.0]  # three within the minute before 70; 5.0 is past
    turn = next_turn([answer], 70.0, {}, sent, CLOCKS)
    assert turn.send is None and turn.wait_seconds == pytest.approx(30.0)
    assert next_turn([answer], 100.0, {}, sent, CLOCKS).send == answer


def test_the_room_and_the_gap_the_later_wins():
    answer = Pending(1, "@queen:hs", Kind.ANSWER, 10.0)
    turn = next_turn([answer], 60.0, {"@queen:hs": 59.0}, [0.5, 30.0, 59.0], Clocks(5.0, 3))
    assert turn.wait_seconds == pytest.approx(4.0)
    turn = next_turn([answer], 60.0, {"@queen:hs": 59.0}, [2.0, 30.0, 59.0], Clocks(2.0, 3))
    assert turn.wait_seconds == pytest.approx(2.0)


def test_expired_rows_are_dropped_and_the_rest_goes():
    stale = Pending(1, "@queen:hs", Kind.CHAIN, 0.0)
    fresh = Pending(2, "@queen:hs", Kind.CHAIN, 50.0)
    turn = next_turn([stale, fresh], CHAIN_HOLD_MAX_SECONDS, {}, [], CLOCKS)
    assert turn.drop == (stale,) and turn.send == fresh
    turn = next_turn([stale], CHAIN_HOLD_MAX_SECONDS, {}, [], CLOCKS)
    assert turn.drop == (stale,) and turn.send is None and turn.wait_seconds == 0.0


def test_a_flood_never_passes_the_clocks():
    """100 answers owed at once: simulated sends stay within the gap and the cap."""
    clocks = Clocks(gap_seconds=0.5, per_minute=30)
    bots = ["@queen:hs", "@reviewer:hs"]
    pending = [Pending(i, bots[i % 2], Kind.ANSWER, 0.0) for i in range(100)]
    now, last, room = 0.0, {}, []
    while pending and now < HOLD_MAX_SECONDS:
        turn = next_turn(pending, now, last, room, clocks)
        if turn.send is None:
            now += turn.wait_seconds
            continue
        pending.remove(turn.send)
        last[turn.send.bot] = now
        room.append(now)
    assert not pending
    for i, t in enumerate(room):
        assert len([u for u in room[: i + 1] if t - u < 60.0]) <= 30
    assert 180.0 <= room[-1] < 190.0  # 100 at 30 a minute: the last in the fourth minute


def test_a_long_message_is_cut_and_says_so():
    assert one_line("short") == "short"
    cut = one_line("x" * 10, max_chars=5)
    assert cut == "xxxx…" and len(cut) == 5
