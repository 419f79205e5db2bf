"""A bee's bot's turn in the room: refused at the spend cap or at zero credit, run once
more after a restart cut it (and said), and its answer the turn's reply cut to a
message's bound (hive.rules.chat_turn)."""

import pytest

from hive.rules import chat_turn as rule
from hive.rules.chat import MESSAGE_MAX_CHARS
from hive.rules.chat_turn import (
    AGAIN,
    NO_ISSUE,
    SAID_NOTHING,
    TURN_TRIES_MAX,
    Step,
    refusal,
    reply,
)
from hive.rules.states import TurnOutcome as T


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


# --- the turn's claim, its brief and its answer ------------------------------------------


@pytest.mark.parametrize(
    ("tries", "refused", "known", "step"),
    [
        (1, None, True, Step.RUN),
        (TURN_TRIES_MAX, None, True, Step.RUN),  # a restart cut the first: once more
        (TURN_TRIES_MAX + 1, None, True, Step.CUT),  # cut as often as it may be: a sentence
        (1, "I run no turn for #3: ...", True, Step.REFUSE),  # the cap, asked again
        (TURN_TRIES_MAX + 1, "no", True, Step.REFUSE),  # the refusal before the cut
        (1, None, False, Step.UNKNOWN),
        (TURN_TRIES_MAX + 1, None, False, Step.UNKNOWN),
    ],
)
def test_a_claimed_row_runs_its_turn_once_more_after_a_cut_then_says_so(
    tries, refused, known, step
):
    assert rule.step(tries, refused, known) == step


def test_a_row_that_runs_no_turn_gets_its_sentence():
    assert rule.sentence(Step.REFUSE, 3, 1, "refused") == "refused"
    assert rule.sentence(Step.UNKNOWN, None, 1, None) == NO_ISSUE
    assert rule.sentence(Step.UNKNOWN, 3, 1, None) == "I know no issue #3."
    assert rule.sentence(Step.CUT, 3, 3, None) == (
        "Restarts of the hive cut my turn on #3 2 times; I run it no more. Ask me again."
    )


def test_a_claim_holds_its_row_past_the_turns_bound():
    assert rule.claim_seconds(300.0) == 300.0 + rule.CLAIM_SLACK_SECONDS


def test_the_brief_carries_the_issue_and_the_question():
    brief = rule.brief(12, "Fix the import", "  why src/app.py?\n")
    assert "issue #12 (Fix the import)" in brief
    assert "\n\nwhy src/app.py?\n\n" in brief
    assert "nothing you write here is kept" in brief


@pytest.mark.parametrize(
    ("lines", "said"),
    [
        (["plain", "output"], "plain\noutput"),  # a command agent: every line
        (["session x (m)", "assistant: one", "tool Read: {}", "assistant: two"], "one\ntwo"),
        (["HIVE-USAGE: input=3", "the answer", "HIVE-REFUSAL: quota"], "the answer"),
        ([], ""),
    ],
)
def test_the_reply_is_the_models_text_or_the_commands_output(lines, said):
    assert rule.reply_of(lines) == said


@pytest.mark.parametrize(
    ("kwargs", "said"),
    [
        ({"outcome": T.FINISHED, "lines": ["it was the import"]}, "it was the import"),
        ({"outcome": T.FINISHED, "lines": []}, SAID_NOTHING),
        (
            {"outcome": T.STOPPED, "lines": ["x"], "at_bound": True},
            "My turn on #7 went past its bound and was stopped; ask me a shorter one.",
        ),
        (
            {"outcome": T.REFUSED, "lines": [], "refusal": "rate_limit"},
            "The provider refused my turn on #7 (rate_limit); ask me again later.",
        ),
        (
            {"outcome": T.ENDED_BADLY, "lines": ["half"], "exit_code": 3},
            "My turn on #7 ended without an answer (ended badly, exit 3).",
        ),
        (
            {"outcome": T.ENDED_UNEXPECTEDLY, "lines": []},
            "My turn on #7 ended without an answer (ended unexpectedly).",
        ),
    ],
)
def test_the_answer_says_how_the_turn_ended(kwargs, said):
    assert rule.answer(7, 1, **kwargs) == said


def test_a_second_try_says_a_restart_cut_the_first():
    assert rule.answer(7, 2, T.FINISHED, ["it was the import"]) == f"{AGAIN} it was the import"
    long = rule.answer(7, 2, T.FINISHED, ["x" * MESSAGE_MAX_CHARS])
    assert long.startswith(AGAIN) and len(long) == MESSAGE_MAX_CHARS


def test_a_turn_that_could_not_start_says_why():
    assert rule.not_started(4, "no such agent") == "My turn on #4 could not start: no such agent"


def test_a_turn_no_process_claimed_is_answered_with_what_to_set():
    assert rule.unclaimed(12) == (
        "No process that runs bees took my turn on #12 within 10 minutes"
        " (set HIVE_CHAT where the bees run); ask me again."
    )


@pytest.mark.parametrize(
    ("held", "own", "rests", "pick"),
    [
        ((), 1, {}, rule.KeyPick(None)),  # no key held: the turn runs without one
        ((), None, {0: 30}, rule.KeyPick(None)),
        ((0, 1, 2), 1, {}, rule.KeyPick(1)),  # the issue's own key
        ((0, 1, 2), None, {}, rule.KeyPick(0)),  # no own key: the first
        ((0, 1, 2), 5, {}, rule.KeyPick(0)),  # its own key is not held here: the first
        ((0, 1, 2), 1, {1: 20}, rule.KeyPick(0)),  # its own rests: the first that does not
        ((0, 1, 2), 0, {0: 20, 1: 5}, rule.KeyPick(2)),
        ((0, 1), 1, {1: 0}, rule.KeyPick(1)),  # a rest that ran out rests nothing
        ((0, 1), 1, {0: 40, 1: 20, 7: 1}, rule.KeyPick(None, 20)),  # all rest: the shortest
    ],
)
def test_a_turn_runs_on_its_issues_key_or_the_first_that_does_not_rest(held, own, rests, pick):
    assert rule.pick_key(held, own, rests) == pick


@pytest.mark.parametrize(
    ("tries", "refused", "known", "rests", "step"),
    [
        (1, None, True, 20, Step.RESTS),  # every key rests: a sentence, no turn
        (1, None, True, 0, Step.RUN),
        (1, "the cap", True, 20, Step.REFUSE),  # the refusal first
        (1, None, False, 20, Step.UNKNOWN),
        (TURN_TRIES_MAX + 1, None, True, 20, Step.CUT),
    ],
)
def test_a_turn_whose_every_key_rests_runs_not(tries, refused, known, rests, step):
    assert rule.step(tries, refused, known, rests) == step


def test_a_turn_whose_every_key_rests_is_answered_with_a_sentence():
    said = rule.resting(12, 20)
    assert "#12" in said and "20 s more" in said and len(said) <= MESSAGE_MAX_CHARS
    assert rule.sentence(Step.RESTS, 12, 1, None, 20) == said
