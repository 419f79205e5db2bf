"""An agent's output is data (issue 25, item 4): a protocol line or a CLI's JSON with an
absurd figure (twenty digits, a negative or NaN cost, a superscript digit, a reset in the
year 33658) is noted and ignored; it never kills the reader and never reaches the
ending."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from hive.agents import FINISHED, Turn, TurnContext, claude, codex
from hive.agents.command import CommandTurn
from hive.agents.protocol import ProtocolError, Usage, parse_refusal_line, parse_usage
from hive.rules.reported import TURN_COST_USD_MAX, TURN_TOKENS_MAX

from .conftest import Recorder

Start = Callable[..., Turn]
TWENTY_DIGITS = "99999999999999999999"


@pytest.mark.parametrize(
    "line",
    [
        "HIVE-USAGE: output=²",
        "HIVE-USAGE: input=٣",
        f"HIVE-USAGE: output={TWENTY_DIGITS}",
        "HIVE-USAGE: input=1000000000001",
        "HIVE-USAGE: cost_usd=999999999",
    ],
)
def test_an_absurd_usage_figure_is_a_protocol_error(line: str) -> None:
    with pytest.raises(ProtocolError):
        parse_usage(line)


@pytest.mark.parametrize("resets", ["999999999999", "9999-12-31T23:59:59-01:00"])
def test_a_reset_outside_the_calendar_is_a_protocol_error(resets: str) -> None:
    with pytest.raises(ProtocolError, match="is not a time"):
        parse_refusal_line(f"HIVE-REFUSAL: quota resets={resets}")


def test_a_turns_usage_adds_up_to_its_bound_and_no_further() -> None:
    big = Usage(input_tokens=TURN_TOKENS_MAX, output_tokens=1, cost_usd=TURN_COST_USD_MAX)
    total = big.plus(big)
    assert (total.input_tokens, total.output_tokens) == (TURN_TOKENS_MAX, 2)
    assert total.cost_usd == TURN_COST_USD_MAX


def test_a_superscript_count_is_noted_and_the_transcript_goes_on(
    start: Start, recorder: Recorder
) -> None:
    turn = start("command:echo 'HIVE-USAGE: output=²'; echo after; echo 'HIVE-USAGE: output=3'")
    assert turn.wait(10)
    assert turn.ending is not None
    assert (turn.outcome, turn.ending.usage) == (FINISHED, Usage(output_tokens=3))
    assert "after" in recorder.texts("stdout")
    assert any("output='²' is not a token count" in t for t in recorder.texts("hive"))


def test_a_twenty_digit_count_is_noted_and_never_reaches_the_ending(
    start: Start, recorder: Recorder
) -> None:
    turn = start(f"command:echo 'HIVE-USAGE: input=1 output={TWENTY_DIGITS}'")
    assert turn.wait(10)
    assert turn.ending is not None
    assert (turn.outcome, turn.ending.usage) == (FINISHED, None)
    assert any("is not a token count" in t for t in recorder.texts("hive"))


def test_a_reset_in_the_year_33658_is_noted_and_the_refusal_line_ignored(
    start: Start, recorder: Recorder
) -> None:
    turn = start("command:echo 'HIVE-REFUSAL: quota resets=999999999999'; echo after")
    assert turn.wait(10)
    assert turn.ending is not None
    assert (turn.outcome, turn.ending.refusal) == (FINISHED, None)
    assert "after" in recorder.texts("stdout")
    assert any("is not a time" in t for t in recorder.texts("hive"))


class _Fussy(CommandTurn):
    """A reader whose line handling raises on one line (as a parser bug would)."""

    def _stdout(self, text: str) -> str | None:
        if text == "boom":
            raise RuntimeError("a bug in the reader")
        return text


def test_a_line_the_reader_cannot_handle_is_noted_and_the_reader_goes_on(
    make_ctx: Callable[..., TurnContext], recorder: Recorder
) -> None:
    turn = _Fussy(make_ctx(), "echo boom; echo after; exit 0")
    turn.begin()
    try:
        assert turn.wait(10)
        assert turn.outcome == FINISHED
        assert recorder.texts("stdout") == ["boom", "after"]
        assert any("a bug in the reader" in t for t in recorder.texts("hive"))
    finally:
        turn.stop("test over")


def _claude_result(usage: dict[str, object], cost: object) -> str:
    event = {"type": "result", "subtype": "success", "is_error": False, "result": "done"}
    return json.dumps(event | {"usage": usage, "modelUsage": {"m": {}}, "total_cost_usd": cost})


@pytest.mark.parametrize(
    ("usage", "cost"),
    [
        ({"input_tokens": "²", "output_tokens": 2}, 0.5),
        ({"input_tokens": int(TWENTY_DIGITS), "output_tokens": 2}, 0.5),
        ({"input_tokens": True, "output_tokens": 2}, 0.5),
        ({"input_tokens": float("nan"), "output_tokens": 2}, 0.5),
    ],
)
def test_claudes_absurd_token_count_is_noted_and_ignored(
    usage: dict[str, object], cost: object
) -> None:
    seen = claude.read_line(_claude_result(usage, cost))
    assert seen.usage == Usage(claude.PROVIDER, "m", 0, 2, 0.5)
    assert any("ignored" in line for line in seen.lines)


@pytest.mark.parametrize("cost", [float("nan"), -1, float("inf"), 1e300, "0.5", True])
def test_claudes_absurd_cost_is_noted_and_the_tokens_are_priced_instead(cost: object) -> None:
    seen = claude.read_line(_claude_result({"input_tokens": 1, "output_tokens": 2}, cost))
    assert seen.usage == Usage(claude.PROVIDER, "m", 1, 2, None)
    assert any("total_cost_usd" in line and "ignored" in line for line in seen.lines)


@pytest.mark.parametrize("count", [int(TWENTY_DIGITS), True, -5, 2.5, "7"])
def test_codexs_absurd_token_count_is_ignored(count: object) -> None:
    line = json.dumps(
        {"type": "turn.completed", "usage": {"input_tokens": count, "output_tokens": 2}}
    )
    seen = codex.read_line(line)
    assert seen.total == Usage(codex.PROVIDER, None, 0, 2)
    assert any("ignored" in text for text in seen.lines)


def test_a_name_carrying_a_nul_is_a_protocol_error() -> None:
    with pytest.raises(ProtocolError, match="is not a name"):
        parse_usage("HIVE-USAGE: model=m\x00x output=1")


def test_claudes_model_name_with_a_nul_is_not_kept() -> None:
    line = json.dumps(
        {"type": "result", "subtype": "success", "usage": {"output_tokens": 1}}
        | {"modelUsage": {"m\x00": {}}}
    )
    assert claude.read_line(line).usage == Usage(claude.PROVIDER, None, 0, 1, None)


def test_absurd_criterion_lines_are_named_and_never_judge_anything() -> None:
    from hive.rules.criteria import judgement_of

    lines = [
        "HIVE-CRITERION: ² met",
        f"HIVE-CRITERION: {TWENTY_DIGITS} met",
        "HIVE-CRITERION: -1 met",
        "HIVE-CRITERION: 0 met",
        "HIVE-CRITERION: ٣ met",
        "HIVE-CRITERION: 1 met\x00",
        "HIVE-CRITERION: 2 unmet: " + "x" * 10_000,
    ]
    judged = judgement_of(lines, criteria=2)
    assert (judged.judged, judged.met) == (1, 0)
    assert judged.unmet == ((2, "x" * 500),)
    assert len(judged.unread) == 6 and all(len(line) <= 200 for line in judged.unread)
