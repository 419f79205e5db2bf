"""Publish-job handlers and engine processes for the live engine tests (spawned, so kept
free of pytest imports).

Every act of an effect, and every step a handler runs, leaves a row in a table of the
test's own (`hive_test_act`, `hive_test_step`), written outside the effects journal: the
tests count there what really happened."""

from __future__ import annotations

from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any

import psycopg

from hive.jobs.engine import Handler, RunResult, StepContext
from hive.rules.jobs import Result, Step
from hive.store import pool
from tests.one_job import run_one_job

from .workers import GO, READY, wait_for

TABLES = """
CREATE TABLE IF NOT EXISTS public.hive_test_act (
    id serial PRIMARY KEY, job bigint, effect text, holder text);
CREATE TABLE IF NOT EXISTS public.hive_test_step (
    id serial PRIMARY KEY, job bigint, step text, holder text);
"""
# the effects the MERGE step makes, in order
MERGE_EFFECTS = ("merge", "record")


def make_tables(db: psycopg.Connection[Any]) -> None:
    db.execute(TABLES)


def acts(db: psycopg.Connection[Any], job: int) -> list[str]:
    """The effects acted on for `job`, in order (a repeated act shows twice)."""
    rows = db.execute(
        "SELECT effect FROM public.hive_test_act WHERE job = %s ORDER BY id", (job,)
    ).fetchall()
    return [effect for (effect,) in rows]


def handlers(
    holder: str, during: Callable[[StepContext, str], None] | None = None
) -> dict[str, Handler]:
    """The publish job's handlers: every step answers its happy result; MERGE makes its
    effects through the journal, calling `during(ctx, key)` inside each act after its
    row is written (a test stops the process there)."""

    def step(ctx: StepContext) -> None:
        ctx.db.execute(  # type: ignore[union-attr]
            "INSERT INTO public.hive_test_step (job, step, holder) VALUES (%s, %s, %s)",
            (ctx.job.id, ctx.job.step, holder),
        )

    def act(ctx: StepContext, key: str) -> Callable[[], Any]:
        def do() -> Any:
            ctx.db.execute(  # type: ignore[union-attr]
                "INSERT INTO public.hive_test_act (job, effect, holder) VALUES (%s, %s, %s)",
                (ctx.job.id, key, holder),
            )
            if during is not None:
                during(ctx, key)
            return {"key": key, "by": holder}

        return do

    def answer(result: Result) -> Handler:
        def run(ctx: StepContext) -> Result:
            step(ctx)
            return result

        return run

    def merge(ctx: StepContext) -> Result:
        step(ctx)
        for key in MERGE_EFFECTS:
            ctx.effect(key, act(ctx, key))
        ctx.say("merged")
        return Result.MERGED

    return {
        Step.CHECKS: answer(Result.PASSED),
        Step.GATE: answer(Result.APPROVED),
        Step.MERGE: merge,
        Step.PUSH: answer(Result.PUSHED),
        Step.CLOSE: answer(Result.CLOSED),
    }


def killed_mid_effect(url: str, stop_in: str, conn: Connection) -> None:
    """Run one pass; inside the act of effect `stop_in` say so and wait to be killed."""

    def during(ctx: StepContext, key: str) -> None:
        if key == stop_in:
            conn.send(("in", key))
            wait_for(conn, GO)  # never comes: the test kills this process here

    with pool.connect(url) as db:
        run_one_job(db, "doomed", handlers("doomed", during))


def engine(url: str, name: str, conn: Connection) -> None:
    """Run passes of one job at a time until a pass claims nothing; send the total."""
    total = RunResult()
    with pool.connect(url) as db:
        conn.send(READY)
        wait_for(conn, GO)
        while (got := run_one_job(db, name, handlers(name))).claimed:
            total += got
    conn.send(total)
