"""The job engine on a real PostgreSQL: a job steps through to its end, a process stopped
mid-effect repeats only the unfinished effect, two engines never run one job twice, and a
parked job wakes when its wait ends."""

import logging
import os
import signal
import threading
import time
from typing import Any

import psycopg

from hive.jobs.engine import LostClaim, RunResult, StepContext, run_claimed
from hive.rules.jobs import JobKind, JobState, Result, Step
from hive.store import jobs, waits
from tests.one_job import run_one_job

from . import job_workers
from .conftest import Child, exited, finish, ready_then_go, running
from .job_workers import MERGE_EFFECTS, acts, handlers, make_tables

PUBLISH = JobKind.PUBLISH
HAPPY_STEPS = ["checks", "gate", "merge", "push", "close"]


def steps_run(db: psycopg.Connection[Any], job: int) -> list[str]:
    rows = db.execute(
        "SELECT step FROM public.hive_test_step WHERE job = %s ORDER BY id", (job,)
    ).fetchall()
    return [step for (step,) in rows]


def run_out(db: psycopg.Connection[Any], job_id: int) -> None:
    """The test's clock: the job's claim ran out a second ago."""
    db.execute(
        "UPDATE hive.queen_job SET claim_due_at = now() - interval '1 second' WHERE id = %s",
        (job_id,),
    )


def test_a_job_steps_through_to_done_in_one_pass(conn):
    make_tables(conn)
    job = jobs.create(conn, PUBLISH, 1, Step.CHECKS).job
    got = run_one_job(conn, "e", handlers("e"))
    assert got == RunResult(claimed=1, steps=5, finished=1)
    ended = jobs.get(conn, job.id)
    assert ended is not None and (ended.state, ended.step) == (JobState.DONE, Step.DONE)
    assert ended.detail == "close: closed" and ended.claimed_by is None
    assert steps_run(conn, job.id) == HAPPY_STEPS
    assert acts(conn, job.id) == list(MERGE_EFFECTS)
    done = {e.effect_key: e.result for e in jobs.effects(conn, job.id) if e.done}
    assert done == {key: {"key": key, "by": "e"} for key in MERGE_EFFECTS}
    assert run_one_job(conn, "e", handlers("e")) == RunResult()


def test_an_effect_done_before_a_raise_is_not_repeated_and_the_unfinished_one_is(conn, caplog):
    make_tables(conn)
    job = jobs.create(conn, PUBLISH, 1, Step.MERGE).job

    def crash(ctx: StepContext, key: str) -> None:
        if key == "record":
            raise RuntimeError("killed mid-effect")

    with caplog.at_level(logging.WARNING, logger="hive.jobs"):
        got = run_one_job(conn, "e", handlers("e", crash))
    assert got == RunResult(claimed=1, errors=1)
    assert f"job {job.id} (publish, issue 1): step merge raised RuntimeError" in caplog.text
    assert len(caplog.records) == 1
    left = jobs.get(conn, job.id)
    assert left is not None and (left.state, left.step) == (JobState.READY, Step.MERGE)
    # the job waits for its claim to run out; then the next pass runs the step again
    assert run_one_job(conn, "e", handlers("e")) == RunResult()
    run_out(conn, job.id)
    assert run_one_job(conn, "e2", handlers("e2")).finished == 1
    assert acts(conn, job.id) == ["merge", "record", "record"]


def test_a_process_killed_mid_effect_is_resumed_without_repeating_a_done_effect(conn, hive_db_url):
    make_tables(conn)
    job = jobs.create(conn, PUBLISH, 1, Step.CHECKS).job
    child = Child(job_workers.killed_mid_effect, hive_db_url, "record", name="doomed")
    with running([child]):
        assert child.receive(60) == ("in", "record")
        os.kill(child.process.pid, signal.SIGKILL)
        assert exited(child.process, 10) == -signal.SIGKILL
    held = jobs.get(conn, job.id)
    assert held is not None and (held.step, held.claimed_by) == (Step.MERGE, "doomed")
    assert [(e.effect_key, e.done) for e in jobs.effects(conn, job.id)] == [
        ("merge", True),
        ("record", False),
    ]
    run_out(conn, job.id)
    got = run_one_job(conn, "next", handlers("next"))
    assert got == RunResult(claimed=1, steps=3, finished=1)
    rows = conn.execute(
        "SELECT effect, holder FROM public.hive_test_act WHERE job = %s ORDER BY id", (job.id,)
    ).fetchall()
    assert rows == [("merge", "doomed"), ("record", "doomed"), ("record", "next")]
    assert steps_run(conn, job.id) == ["checks", "gate", "merge", "merge", "push", "close"]


def test_two_engines_at_once_never_run_one_job_twice(conn, hive_db_url):
    make_tables(conn)
    made = [jobs.create(conn, PUBLISH, n, Step.CHECKS).job.id for n in range(1, 21)]
    children = [Child(job_workers.engine, hive_db_url, name, name=name) for name in "ab"]
    with running(children):
        ready_then_go(children, 60)
        totals = [child.receive(120) for child in children]
        finish(children, 30)
    assert sum(t.finished for t in totals) == 20
    assert sum(t.errors + t.lost for t in totals) == 0
    runs = conn.execute(
        "SELECT job, step, count(*), count(DISTINCT holder) FROM public.hive_test_step"
        " GROUP BY job, step"
    ).fetchall()
    assert len(runs) == 20 * len(HAPPY_STEPS)
    assert all(count == 1 and holders == 1 for _, _, count, holders in runs)
    acted = conn.execute("SELECT count(*) FROM public.hive_test_act").fetchone()
    assert acted == (20 * len(MERGE_EFFECTS),)
    for job_id in made:
        ended = jobs.get(conn, job_id)
        assert ended is not None and ended.state is JobState.DONE


def test_a_step_that_lost_its_claim_acts_on_nothing_more(conn):
    make_tables(conn)
    job = jobs.create(conn, PUBLISH, 1, Step.MERGE).job

    def overtaken(ctx: StepContext, key: str) -> None:
        if key == "merge":  # meanwhile the claim ran out and another engine took the job
            run_out(conn, job.id)
            assert len(jobs.claim(conn, "other", kind=PUBLISH)) == 1

    got = run_one_job(conn, "slow", handlers("slow", overtaken))
    assert got == RunResult(claimed=1, lost=1)
    assert acts(conn, job.id) == ["merge"]  # "record" was never acted on
    held = jobs.get(conn, job.id)
    assert held is not None and (held.step, held.claimed_by) == (Step.MERGE, "other")


def test_a_parked_job_wakes_when_its_wait_resolves_and_runs_on(conn):
    make_tables(conn)
    job = jobs.create(conn, PUBLISH, 1, Step.CHECKS).job
    approved: list[bool] = []

    def gate(ctx: StepContext) -> Result:
        if approved:
            return Result.APPROVED
        return ctx.park(key="approve:1", wake_in_seconds=3600, detail="awaits approval")

    steps = {**handlers("e"), Step.GATE: gate}
    assert run_one_job(conn, "e", steps) == RunResult(claimed=1, steps=2, parked=1)
    parked = jobs.get(conn, job.id)
    assert parked is not None and parked.state is JobState.PARKED
    assert (parked.step, parked.detail) == (Step.GATE, "awaits approval")
    assert run_one_job(conn, "e", steps) == RunResult()
    approved.append(True)
    (first,) = waits.resolve(conn, "approve:1")
    assert first.wakes and first.woke_job == job.id
    assert waits.resolve(conn, "approve:1") == []  # a second approval wakes nothing
    assert run_one_job(conn, "e", steps) == RunResult(claimed=1, steps=4, finished=1)
    assert steps_run(conn, job.id) == ["checks", "merge", "push", "close"]


def test_a_parked_job_wakes_when_its_wait_expires(conn):
    make_tables(conn)
    job = jobs.create(conn, PUBLISH, 1, Step.GATE).job
    steps = {Step.GATE: lambda ctx: ctx.park(wake_in_seconds=0)}
    assert run_one_job(conn, "e", steps).parked == 1
    (expired,) = waits.expire_due(conn)
    assert expired.woke_job == job.id
    assert run_one_job(conn, "e", steps).parked == 1  # the gate ran again, and parked again


def test_an_answer_that_leads_nowhere_fails_the_job_saying_so(conn):
    job = jobs.create(conn, PUBLISH, 1, Step.CHECKS).job
    got = run_one_job(conn, "e", {Step.CHECKS: lambda ctx: Result.PUSHED})
    assert got == RunResult(claimed=1, steps=1, failed=1)
    ended = jobs.get(conn, job.id)
    assert ended is not None and ended.state is JobState.FAILED
    assert ended.detail == "step checks answered pushed, which leads nowhere"


def test_a_step_without_a_handler_or_parked_without_a_wait_is_left_for_a_retry(conn):
    jobs.create(conn, PUBLISH, 1, Step.CHECKS)
    assert run_one_job(conn, "e", {}) == RunResult(claimed=1, errors=1)
    jobs.create(conn, PUBLISH, 2, Step.CHECKS)
    got = run_one_job(conn, "e", {Step.CHECKS: lambda ctx: Result.PARKED})
    assert got == RunResult(claimed=1, steps=1, errors=1)


def test_lost_claim_is_what_a_fenced_effect_raises(conn):
    jobs.create(conn, PUBLISH, 1, Step.MERGE)
    (job,) = jobs.claim(conn, "a", kind=PUBLISH)
    jobs.cancel(conn, 1, "cancelled")
    ctx = StepContext(conn, job, 60)
    try:
        ctx.effect("merge", lambda: 1)
    except LostClaim:
        pass
    else:
        raise AssertionError("a cancelled job's effect was begun")
    try:
        ctx.renew()
    except LostClaim:
        return
    raise AssertionError("a cancelled job's claim was renewed")


def test_each_step_renews_the_claim_so_the_next_runs_under_it(conn):
    make_tables(conn)
    job = jobs.create(conn, PUBLISH, 1, Step.CHECKS).job
    taken: list[int] = []

    def checks(ctx: StepContext) -> Result:
        run_out(conn, job.id)  # a long step: the claim ran out meanwhile (still ours)
        return Result.PASSED

    def gate(ctx: StepContext) -> Result:
        taken.extend(j.id for j in jobs.claim(conn, "other", kind=PUBLISH))
        return Result.APPROVED

    steps = {**handlers("e"), Step.CHECKS: checks, Step.GATE: gate}
    assert run_one_job(conn, "e", steps).finished == 1
    assert taken == []


def test_a_job_whose_claim_was_lost_while_it_waited_its_turn_in_the_batch_is_not_run(conn):
    make_tables(conn)
    first = jobs.create(conn, PUBLISH, 1, Step.CLOSE).job
    second = jobs.create(conn, PUBLISH, 2, Step.CLOSE).job

    def close(ctx: StepContext) -> Result:
        if ctx.job.id == first.id:  # a long step: the second job's claim ran out meanwhile
            run_out(conn, second.id)
            assert [j.id for j in jobs.claim(conn, "other", kind=PUBLISH)] == [second.id]
        ctx.db.execute(  # type: ignore[union-attr]
            "INSERT INTO public.hive_test_step (job, step, holder) VALUES (%s, 'close', 'e')",
            (ctx.job.id,),
        )
        return Result.CLOSED

    claimed = jobs.claim(conn, "e", kind=PUBLISH)  # one batch, run one job after the other
    assert [j.id for j in claimed] == [first.id, second.id]
    got = sum((run_claimed(conn, job, {Step.CLOSE: close}) for job in claimed), RunResult())
    assert got == RunResult(steps=1, finished=1, lost=1)
    assert steps_run(conn, second.id) == []


def claim_due(url: str, job_id: int) -> Any:
    with psycopg.connect(url, autocommit=True) as c:
        row = c.execute("SELECT claim_due_at FROM hive.queen_job WHERE id = %s", (job_id,))
        return row.fetchone()[0]  # type: ignore[index]


def test_a_step_held_past_two_claims_keeps_its_job(conn, hive_db_url):
    make_tables(conn)
    job = jobs.create(conn, PUBLISH, 1, Step.CHECKS).job
    taken: list[int] = []

    def long_check() -> str:  # renewed twice (a claim is 3 s here), then another engine asks
        seen = [claim_due(hive_db_url, job.id)]
        deadline = time.monotonic() + 30
        while len(seen) < 3 and time.monotonic() < deadline:
            due = claim_due(hive_db_url, job.id)
            if due != seen[-1]:
                seen.append(due)
            time.sleep(0.05)
        assert len(seen) == 3, f"the claim was renewed {len(seen) - 1} times in 30 s"
        with psycopg.connect(hive_db_url, autocommit=True) as other:
            taken.extend(j.id for j in jobs.claim(other, "other", kind=PUBLISH))
        return "done"

    def checks(ctx: StepContext) -> Result:
        assert ctx.held_while(long_check, lambda: None) == "done"
        return Result.PASSED

    got = run_one_job(conn, "e", {**handlers("e"), Step.CHECKS: checks}, ttl_seconds=3)
    assert got.finished == 1 and taken == []


def test_a_held_step_that_loses_its_claim_is_stopped_and_acts_on_nothing_more(conn, hive_db_url):
    make_tables(conn)
    job = jobs.create(conn, PUBLISH, 1, Step.CHECKS).job
    stopped = threading.Event()

    def overtaken_check() -> str:  # the claim runs out and another engine takes the job
        with psycopg.connect(hive_db_url, autocommit=True) as other:
            run_out(other, job.id)
            assert len(jobs.claim(other, "other", kind=PUBLISH)) == 1
        assert stopped.wait(30), "the check was not stopped when its claim was lost"
        return "stopped"

    def checks(ctx: StepContext) -> Result:
        ctx.held_while(overtaken_check, stopped.set)
        raise AssertionError("held_while returned after the claim was lost")

    got = run_one_job(conn, "e", {**handlers("e"), Step.CHECKS: checks}, ttl_seconds=3)
    assert got == RunResult(claimed=1, lost=1)
    held = jobs.get(conn, job.id)
    assert held is not None and (held.step, held.claimed_by) == (Step.CHECKS, "other")


def test_a_run_that_began_after_its_claim_ran_out_says_so_and_runs_nothing(conn, caplog):
    # a job's run starts on a thread of its own: one that began after its claim ran out
    # (and another claimed the job) runs nothing, and the log says why
    make_tables(conn)
    created = jobs.create(conn, PUBLISH, 1, Step.MERGE).job
    [late] = jobs.claim(conn, "slow", kind=PUBLISH)
    run_out(conn, created.id)
    assert len(jobs.claim(conn, "other", kind=PUBLISH)) == 1
    with caplog.at_level(logging.WARNING, logger="hive.jobs"):
        got = run_claimed(conn, late, handlers("slow"))
    assert got == RunResult(lost=1)
    assert acts(conn, created.id) == []
    assert caplog.messages == [
        f"job {created.id} (publish, issue 1): not run: its run began after its claim ran"
        " out, and other claimed it again"
    ]


def test_a_run_whose_job_was_cancelled_before_it_began_says_so(conn, caplog):
    make_tables(conn)
    created = jobs.create(conn, PUBLISH, 1, Step.MERGE).job
    [late] = jobs.claim(conn, "slow", kind=PUBLISH)
    assert len(jobs.cancel(conn, 1, "cancelled by hand")) == 1
    with caplog.at_level(logging.WARNING, logger="hive.jobs"):
        got = run_claimed(conn, late, handlers("slow"))
    assert got == RunResult(lost=1)
    assert caplog.messages == [
        f"job {created.id} (publish, issue 1): not run: it was cancelled before its run began"
    ]
