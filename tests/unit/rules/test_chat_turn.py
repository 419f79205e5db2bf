"""A bee's bot's turn in the room: refused at the spend cap or at zero credit, and its
answer the turn's reply cut to a message's bound (hive.rules.chat_turn)."""

import pytest

from hive.rules.chat import MESSAGE_MAX_CHARS
from hive.rules.chat_turn import SAID_NOTHING, refusal, reply


@pytest.mark.parametrize(
    ("spent", "cap", "account", "balance", "refused"),
    [
        (0.0, 0.0, None, 0, None),  # no cap, credits off
        (99.0, 0.0, None, 0, None),  # no cap: any spend
        (4.99, 5.0, None, 0, None),  # under the cap
        (5.0, 5.0, None, 0, "today's spend $5.00 reached HIVE_SPEND_CAP_USD=$5.00"),
        (7.5, 5.0, "acme", 100, "today's spend $7.50 reached"),  # the cap before credit
        (0.0, 0.0, "acme", 1, None),  # one token left: it may
        (0.0, 0.0, "acme", 0, "its account acme is at zero"),
        (0.0, 5.0, "acme", -40, "its account acme is overdrawn by 40 tokens"),
    ],
)
def test_the_turn_is_refused_at_the_cap_or_at_zero_credit(spent, cap, account, balance, refused):
    said = refusal(12, spent, cap, account, balance)
    if refused is None:
        assert said is None
    else:
        assert said is not None and said.startswith("I run no turn for #12: ")
        assert refused in said


def test_the_credit_refusal_says_how_to_go_on():
    said = refusal(3, 0.0, 0.0, "acme", 0)
    assert said is not None and said.endswith("hive credit grant acme TOKENS lets me answer.")


def test_the_cap_refusal_says_when_to_ask_again():
    said = refusal(3, 6.0, 5.0)
    assert said is not None and said.endswith("ask again after 00:00 UTC.")


@pytest.mark.parametrize(
    ("text", "answer"),
    [
        ("I touched it to fix the import.", "I touched it to fix the import."),
        ("  spaced out \n", "spaced out"),
        ("", SAID_NOTHING),
        ("   \n", SAID_NOTHING),
        (None, SAID_NOTHING),
    ],
)
def test_the_answer_is_the_turns_reply(text, answer):
    assert reply(text) == answer


def test_a_long_reply_is_cut_to_the_message_bound():
    said = reply("x" * (MESSAGE_MAX_CHARS + 10))
    assert len(said) == MESSAGE_MAX_CHARS and said.endswith("…")
