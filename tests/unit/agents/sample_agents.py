"""Agents for the `python:` adapter's tests (named as `python:<this module>:<callable>`)."""

from __future__ import annotations

import threading

from hive.agents import Report, TurnContext, Usage

# set by a test to let `ignores_stopping` return
RELEASE = threading.Event()
# set by `ignores_stopping` once it has seen the stop
SAW_STOP = threading.Event()


def returns_none(ctx: TurnContext) -> None:
    ctx.on_line("stdout", f"working on #{ctx.issue} in {ctx.worktree.name}")


def returns_true(ctx: TurnContext) -> bool:
    return True


def returns_false(ctx: TurnContext) -> bool:
    return False


def returns_a_number(ctx: TurnContext) -> int:
    return 42


def reports_a_refusal(ctx: TurnContext) -> Report:
    return Report(ok=False, refusal="rate-limit", usage=Usage("anthropic", "m1", 7, 0))


def reports_a_malformed_refusal(ctx: TurnContext) -> Report:
    return Report(refusal="not one word")


def reports_failure(ctx: TurnContext) -> Report:
    return Report(ok=False)


def raises(ctx: TurnContext) -> None:
    raise ValueError("the model said no")


def exits(ctx: TurnContext) -> None:
    raise SystemExit(3)


def writes_a_long_line(ctx: TurnContext) -> None:
    ctx.on_line("stdout", "y" * 10_000)


def honours_stopping(ctx: TurnContext) -> None:
    ctx.stopping.wait(30)


def ignores_stopping(ctx: TurnContext) -> None:
    ctx.stopping.wait(30)
    SAW_STOP.set()
    RELEASE.wait(30)


not_callable = 3
