"""Retention of check runs, jobs, their effects and their waits on real PostgreSQL: an
issue closed past HIVE_RETENTION_DAYS loses its check runs and ended jobs, each with its
journal and its moved waits; a live job keeps all of its rows, whatever its issue; an
issue closed inside the window, open, or with an order in flight keeps everything; a
backlog larger than a batch goes over several; `hive_pruned_total` counts what went."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from hive import configs
from hive.actors.retention import Retention
from hive.rules.jobs import JobKind, JobState, Step
from hive.rules.waits import WAITING, WaitState
from hive.store import jobs, orders, publish, waits
from hive.store import retention as store
from hive.store.jobs import Job
from hive.store.orders import NewOrder

pytestmark = pytest.mark.live

PUBLISH = JobKind.PUBLISH
DAY_SECONDS = 86400
OLD_DAYS = 40  # past the default window of 30
MERGE_SHA = "2" * 40


@dataclass
class Made:
    """One issue of a scenario and the ids of the jobs it made for it."""

    issue: int
    job_ids: list[int] = field(default_factory=list)

    def rows(self, db: Any) -> dict[str, int]:
        """How many check runs, jobs, effects and waits of this issue are left."""
        counts = {
            "check_runs": ("SELECT count(*) FROM hive.queen_check WHERE issue = %s", self.issue),
            "jobs": ("SELECT count(*) FROM hive.queen_job WHERE issue = %s", self.issue),
            "effects": (
                "SELECT count(*) FROM hive.queen_effect WHERE job = ANY (%s)",
                self.job_ids,
            ),
            "waits": ("SELECT count(*) FROM hive.queen_wait WHERE owner = ANY (%s)", self.owners),
        }
        with db.connection() as conn:
            return {k: conn.execute(sql, (arg,)).fetchone()[0] for k, (sql, arg) in counts.items()}

    @property
    def owners(self) -> list[str]:
        return [f"job:{j}" for j in self.job_ids]


def closed_issue(db: Any, number: int, days_ago: float, state: str = "closed") -> Made:
    """An issue closed `days_ago` days ago, in `state` (open: reopened, its old closing
    left behind)."""
    with db.connection() as conn:
        conn.execute(
            "INSERT INTO hive.queen_issue (number, title, state, closed_reason, closed_code,"
            " closed_at) VALUES (%s, %s, %s, 'merged', 'merged',"
            " now() - make_interval(secs => %s))",
            (number, f"issue {number}", state, days_ago * DAY_SECONDS),
        )
    return Made(number)


def claimed(db: Any, job_id: int) -> Job:
    """The claim of the one job due: the scenario builds one job at a time."""
    (job,) = jobs.claim(db, "queen", kind=PUBLISH, batch=1)
    assert job.id == job_id
    return job


def check(db: Any, job: Job, name: str) -> None:
    assert job.issue is not None
    publish.record_check(
        db,
        issue=job.issue,
        attempt=1,
        job=job.id,
        merge_sha=MERGE_SHA,
        name=name,
        result="pass",
        exit_code=0,
        seconds=1.0,
        output_tail=f"{name}: ok",
    )


def effect(db: Any, job: Job, key: str, *, finished: bool = True) -> None:
    assert jobs.begin_effect(db, job, key) is not None
    if finished:
        assert jobs.finish_effect(db, job.id, key, {"done": key}) is not None


def new_job(db: Any, made: Made) -> Job:
    created = jobs.create(db, PUBLISH, made.issue, Step.CHECKS, attempt=1)
    assert created.created
    made.job_ids.append(created.job.id)
    return claimed(db, created.job.id)


def park_and_resolve(db: Any, job: Job) -> Job:
    """Park `job` on a keyed wait and resolve it: the wait is RESOLVED, the job ready again."""
    assert jobs.park(db, job, key=f"approve:{job.issue}") is not None
    assert waits.resolve(db, f"approve:{job.issue}")
    return claimed(db, job.id)


def park_and_expire(db: Any, job: Job) -> Job:
    """Park `job` on a wait due at once and expire it: EXPIRED, the job ready again."""
    assert jobs.park(db, job, wake_in_seconds=0) is not None
    assert waits.expire_due(db)
    return claimed(db, job.id)


def done_job(db: Any, made: Made, checks: int = 2) -> None:
    """A publish job that ran to DONE: `checks` check runs, two effects, a resolved and
    an expired wait."""
    job = new_job(db, made)
    for n in range(checks):
        check(db, job, f"check-{n}")
    job = park_and_resolve(db, job)
    effect(db, job, f"push:{MERGE_SHA}")
    job = park_and_expire(db, job)
    effect(db, job, f"close:{made.issue}:1")
    assert jobs.finish(db, job, JobState.DONE, Step.DONE, "merged") is not None


def cancelled_job(db: Any, made: Made) -> None:
    """A job cancelled while parked: one effect, its wait CANCELLED."""
    job = new_job(db, made)
    effect(db, job, f"first-look:{MERGE_SHA}")
    assert jobs.park(db, job, key=f"approve:{made.issue}") is not None
    assert [j.id for j in jobs.cancel(db, made.issue, "sent back")] == [job.id]


def running_job(db: Any, made: Made) -> Job:
    """A job claimed mid-step: its effect begun and not done, no check run yet."""
    job = new_job(db, made)
    effect(db, job, f"first-look:{MERGE_SHA}")
    effect(db, job, f"push:{MERGE_SHA}", finished=False)
    return job


def parked_job(db: Any, made: Made) -> Job:
    """A job parked at GATE on a WAITING wait, after its checks, one done effect and an
    earlier resolved wait."""
    job = new_job(db, made)
    check(db, job, "tests")
    effect(db, job, f"first-look:{MERGE_SHA}")
    job = park_and_resolve(db, job)
    advanced = jobs.advance(db, job, Step.GATE, "awaits approval")
    assert advanced is not None
    parked = jobs.park(db, advanced, key=f"approve:{made.issue}:again")
    assert parked is not None and parked.state is JobState.PARKED
    return parked


def wait_states(db: Any, made: Made) -> list[WaitState]:
    with db.connection() as conn:
        rows = conn.execute(
            "SELECT state FROM hive.queen_wait WHERE owner = ANY (%s) ORDER BY id", (made.owners,)
        ).fetchall()
    return [WaitState(r[0]) for r in rows]


def pruned(rt: Any, what: str) -> float:
    value = rt.metrics.registry.get_sample_value("hive_pruned_total", {"what": what})
    return 0.0 if value is None else value


def one_pass(rt: Any, **config: Any) -> Any:
    settings = configs.retention_config(rt.settings)
    return Retention(rt.db, rt.checkout, rt.metrics, replace(settings, **config)).run_once(
        force=True
    )


def test_an_old_closed_issue_loses_its_check_runs_ended_jobs_their_effects_and_waits(
    make_runtime,
):
    rt = make_runtime()
    old = closed_issue(rt.db, 1, OLD_DAYS)
    done_job(rt.db, old)
    cancelled_job(rt.db, old)
    assert old.rows(rt.db) == {"check_runs": 2, "jobs": 2, "effects": 3, "waits": 3}

    done = one_pass(rt)

    assert (done.check_runs, done.jobs, done.effects, done.waits) == (2, 2, 3, 3)
    assert old.rows(rt.db) == {"check_runs": 0, "jobs": 0, "effects": 0, "waits": 0}
    assert "2 check runs, 2 jobs, 3 effects, 3 waits" in str(done)
    for what, n in {"check_runs": 2, "jobs": 2, "effects": 3, "waits": 3}.items():
        assert pruned(rt, what) == n, what
    # the issue itself stays, and nothing more is due
    assert one_pass(rt).jobs == 0
    with rt.db.connection() as conn:
        assert conn.execute("SELECT count(*) FROM hive.queen_issue").fetchone()[0] == 1


def test_a_live_job_of_an_old_closed_issue_keeps_its_checks_effects_and_waits(make_runtime):
    rt = make_runtime()
    # reopened and closed again long ago, with a job still mid-step
    running = closed_issue(rt.db, 2, OLD_DAYS)
    running_job(rt.db, running)
    # an ended job (it goes) and then a live one parked at the gate (it stays, whole)
    gated = closed_issue(rt.db, 3, OLD_DAYS)
    done_job(rt.db, gated, checks=1)
    parked = parked_job(rt.db, gated)
    gated_before = gated.rows(rt.db)
    assert gated_before == {"check_runs": 2, "jobs": 2, "effects": 2 + 1, "waits": 2 + 2}

    done = one_pass(rt)

    assert (done.check_runs, done.jobs, done.effects, done.waits) == (1, 1, 2, 2)
    assert running.rows(rt.db) == {"check_runs": 0, "jobs": 1, "effects": 2, "waits": 0}
    (job,) = [jobs.get(rt.db, j) for j in running.job_ids]
    assert job is not None and job.state is JobState.READY and job.claimed_by == "queen"
    assert [e.done for e in jobs.effects(rt.db, job.id)] == [True, False]
    assert gated.rows(rt.db) == {"check_runs": 1, "jobs": 1, "effects": 1, "waits": 2}
    assert jobs.get(rt.db, parked.id) == parked
    assert wait_states(rt.db, gated) == [WaitState.RESOLVED, WAITING]


def test_an_ended_job_that_owns_a_waiting_wait_stays_until_the_wait_moves(make_runtime):
    rt = make_runtime()
    old = closed_issue(rt.db, 4, OLD_DAYS)
    done_job(rt.db, old, checks=0)
    stray = waits.add(rt.db, f"job:{old.job_ids[0]}", key="stray")

    assert one_pass(rt).jobs == 0
    assert old.rows(rt.db) == {"check_runs": 0, "jobs": 1, "effects": 2, "waits": 3}

    assert waits.cancel(rt.db, stray.id) is not None
    done = one_pass(rt)
    assert (done.jobs, done.effects, done.waits) == (1, 2, 3)
    assert old.rows(rt.db) == {"check_runs": 0, "jobs": 0, "effects": 0, "waits": 0}


def test_an_issue_closed_inside_the_window_open_or_with_an_order_in_flight_keeps_its_jobs(
    make_runtime,
):
    rt = make_runtime()
    recent = closed_issue(rt.db, 5, 29.9)
    # open again, its old closing left behind (the state is what counts)
    opened = closed_issue(rt.db, 6, OLD_DAYS, state="open")
    in_flight = closed_issue(rt.db, 7, OLD_DAYS)
    for made in (recent, opened, in_flight):
        done_job(rt.db, made)
        cancelled_job(rt.db, made)
    new = NewOrder(7, "queen-7", "main", brief="do it")
    assert orders.insert(rt.db, new, queued=True) is orders.Insertion.WRITTEN
    before = {m.issue: m.rows(rt.db) for m in (recent, opened, in_flight)}

    done = one_pass(rt)

    assert (done.check_runs, done.jobs, done.effects, done.waits) == (0, 0, 0, 0)
    assert {m.issue: m.rows(rt.db) for m in (recent, opened, in_flight)} == before
    assert before[5] == {"check_runs": 2, "jobs": 2, "effects": 3, "waits": 3}
    assert pruned(rt, "jobs") == 0


def prune_until_done(retention: Retention) -> tuple[int, int, int]:
    """Passes until nothing more is due: the batches they ran, check runs and jobs pruned.
    Each batch keeps to its limits (the test's config: 4 check runs, 3 jobs)."""
    batches = check_runs = pruned_jobs = 0
    for _ in range(20):
        done = retention.run_once(force=True)
        assert done.check_runs <= 4 * done.batches and done.jobs <= 3 * done.batches
        batches, check_runs = batches + done.batches, check_runs + done.check_runs
        pruned_jobs += done.jobs
        if not done.more_due:
            return batches, check_runs, pruned_jobs
    raise AssertionError("still more due after 20 passes")


def test_a_backlog_larger_than_a_batch_goes_over_several_batches(make_runtime):
    rt = make_runtime()
    backlog = [closed_issue(rt.db, n, OLD_DAYS + n) for n in range(10, 19)]
    for made in backlog:
        done_job(rt.db, made)  # 9 jobs, 18 check runs
    cutoff = datetime.now(UTC) - timedelta(days=30)

    # one statement deletes at most its limit; a job waits for its check runs to go
    assert store.prune_checks(rt.db, cutoff, rows=3) == 3
    first = store.prune_jobs(rt.db, cutoff, jobs=5)
    assert first.jobs == 1 and (first.effects, first.waits) == (2, 2) and not first.full(5)
    assert store.prune_checks(rt.db, cutoff, rows=100) == 15
    assert store.prune_jobs(rt.db, cutoff, jobs=5).full(5)
    assert store.prune_jobs(rt.db, cutoff, jobs=5).jobs == 3

    config = replace(configs.retention_config(rt.settings), batch_rows=4, batch_jobs=3)
    retention = Retention(rt.db, rt.checkout, rt.metrics, config)
    # a full batch of check runs brings the next one: two jobs with six each
    for made in backlog[:2]:
        done_job(rt.db, made, checks=6)
    batches, check_runs, pruned_jobs = prune_until_done(retention)
    assert (check_runs, pruned_jobs) == (12, 2) and batches >= 12 // 4
    # and so does a full batch of jobs: seven without check runs
    for made in backlog[:7]:
        done_job(rt.db, made, checks=0)
    batches, check_runs, pruned_jobs = prune_until_done(retention)
    assert (check_runs, pruned_jobs) == (0, 7) and batches >= 7 // 3

    for made in backlog:
        assert made.rows(rt.db) == {"check_runs": 0, "jobs": 0, "effects": 0, "waits": 0}
    assert pruned(rt, "check_runs") == 12 and pruned(rt, "jobs") == 9
    assert pruned(rt, "effects") == pruned(rt, "waits") == 2 * 9
