"""`python:` agents for the runtime's tests (`python:tests.live.runtime.agents:<name>`).

Each writes into its boundary and leaves the commit to the bee's salvage, the way an
agent that forgets to commit would."""

from __future__ import annotations

import threading

from hive.agents import Report, TurnContext

# a test sets this to hold `until_released` turns, and clears it for the next test
RELEASE = threading.Event()


def _write(ctx: TurnContext, text: str) -> None:
    path = ctx.worktree / ctx.boundary[0]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def finish(ctx: TurnContext) -> None:
    """Write the first boundary file and finish."""
    ctx.on_line("stdout", f"working on #{ctx.issue}")
    _write(ctx, f"done by the bee of #{ctx.issue}\n")


def until_stopped(ctx: TurnContext) -> None:
    """Write the first boundary file, then wait for the stop (a long turn)."""
    _write(ctx, f"half done by the bee of #{ctx.issue}\n")
    ctx.stopping.wait(120)


def until_released(ctx: TurnContext) -> None:
    """Write, then run until the test releases it (or it is stopped)."""
    _write(ctx, f"written by #{ctx.issue}\n")
    while not RELEASE.wait(0.05):
        if ctx.stopping.is_set():
            return


def quota(ctx: TurnContext) -> Report:
    """The provider refused the turn: the account is out of quota."""
    return Report(ok=False, refusal="quota")


def ignores_stop(ctx: TurnContext) -> None:
    """Write, then run until the test releases it, deaf to its stop (a thread cannot be
    killed: its turn is abandoned, and holds its slot until it returns)."""
    _write(ctx, f"written by #{ctx.issue}\n")
    RELEASE.wait(120)


def append(ctx: TurnContext) -> None:
    """Add one line to the first boundary file, naming the turn's worktree (so a test
    can tell which runner's turn wrote it)."""
    path = ctx.worktree / ctx.boundary[0]
    with path.open("a") as out:
        out.write(f"a turn in {ctx.worktree.parent.name}\n")


def reports_usage(ctx: TurnContext) -> Report:
    """Finish, reporting the provider and model that really ran the turn."""
    from hive.agents import Usage

    _write(ctx, f"done by the bee of #{ctx.issue}\n")
    return Report(usage=Usage("anthropic", "claude-reported", 5, 7))


def reports_cost(ctx: TurnContext) -> Report:
    """Finish, reporting its own cost in US dollars (as Claude Code's result does)."""
    from hive.agents import Usage

    _write(ctx, f"done by the bee of #{ctx.issue}\n")
    return Report(usage=Usage("anthropic", "claude-sonnet-4-5", 1000, 2000, cost_usd=0.75))


def reports_priced_tokens(ctx: TurnContext) -> Report:
    """Finish, reporting tokens of a model the price table knows, and no cost."""
    from hive.agents import Usage

    _write(ctx, f"done by the bee of #{ctx.issue}\n")
    return Report(usage=Usage("anthropic", "claude-sonnet-4-5-20250929", 1_000_000, 100_000))


def reports_bare_tokens(ctx: TurnContext) -> Report:
    """Finish, reporting tokens only: no provider, no model, no cost."""
    from hive.agents import Usage

    _write(ctx, f"done by the bee of #{ctx.issue}\n")
    return Report(usage=Usage(None, None, 1_000_000, 0))


def refuses_quota_until_reset(ctx: TurnContext) -> Report:
    """Refuse as a quota would, saying the key works again in two hours."""
    from datetime import UTC, datetime, timedelta

    resets = datetime.now(UTC).replace(microsecond=0) + timedelta(hours=2)
    _write(ctx, f"resets at {resets.isoformat()}\n")
    return Report(ok=False, refusal="quota", resets_at=resets)


def reports_absurd_usage(ctx: TurnContext) -> Report:
    """Finish, reporting a token count no bigint holds (a `python:` agent's report is
    not parsed: only the ending stands between it and the store)."""
    from hive.agents import Usage

    _write(ctx, f"done by the bee of #{ctx.issue}\n")
    return Report(usage=Usage("anthropic", "m", 1, 99999999999999999999))
