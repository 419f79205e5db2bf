"""RULES 10 on a real PostgreSQL: jobs claimed like waits (epoch, SKIP LOCKED), fenced
writes, parking, cancelling, and the effects journal."""

from typing import Any

import psycopg
import pytest

from hive.rules.jobs import JobKind, JobState, Step
from hive.rules.waits import CANCELLED, CLAIM_TTL_SECONDS
from hive.store import jobs, waits

PUBLISH = JobKind.PUBLISH


def run_out(conn: psycopg.Connection[Any], job_id: int) -> None:
    """The test's clock: the job's claim ran out a second ago."""
    conn.execute(
        "UPDATE hive.queen_job SET claim_due_at = now() - interval '1 second' WHERE id = %s",
        (job_id,),
    )


def test_creating_a_live_job_again_finds_it(conn):
    first = jobs.create(conn, PUBLISH, 7, Step.CHECKS, attempt=2, args={"head": "a"})
    again = jobs.create(conn, PUBLISH, 7, Step.CHECKS, attempt=3)
    assert first.created and not again.created
    assert again.job.id == first.job.id and again.job.attempt == 2
    assert first.job.state is JobState.READY and first.job.args == {"head": "a"}
    assert jobs.live(conn, PUBLISH, 7) == first.job
    # another issue, or a job of this issue that ended, does not stand in the way
    assert jobs.create(conn, PUBLISH, 8, Step.CHECKS).created
    jobs.cancel(conn, 7, "sent back")
    assert jobs.create(conn, PUBLISH, 7, Step.CHECKS).created


def test_a_claim_bumps_the_epoch_and_holds_the_job_for_its_ttl(conn):
    made = jobs.create(conn, PUBLISH, 1, Step.CHECKS).job
    (claimed,) = jobs.claim(conn, "a", kind=PUBLISH)
    assert (claimed.id, claimed.epoch, claimed.claimed_by) == (made.id, made.epoch + 1, "a")
    held_for = conn.execute(
        "SELECT extract(epoch FROM claim_due_at - now()) FROM hive.queen_job WHERE id = %s",
        (made.id,),
    ).fetchone()
    assert held_for is not None and CLAIM_TTL_SECONDS - 5 < held_for[0] <= CLAIM_TTL_SECONDS
    assert jobs.claim(conn, "b", kind=PUBLISH) == []
    assert jobs.claim(conn, "b", kind="another kind") == []
    run_out(conn, made.id)
    (again,) = jobs.claim(conn, "b", kind=PUBLISH)
    assert (again.epoch, again.claimed_by) == (claimed.epoch + 1, "b")


def test_a_claim_takes_at_most_its_batch_oldest_first(conn):
    made = [jobs.create(conn, PUBLISH, n, Step.CHECKS).job.id for n in range(1, 6)]
    assert [j.id for j in jobs.claim(conn, "a", kind=PUBLISH, batch=2)] == made[:2]
    assert [j.id for j in jobs.claim(conn, "b", kind=PUBLISH, batch=10)] == made[2:]


def test_a_claim_skips_a_row_another_claim_has_locked(conn, hive_db_url):
    first = jobs.create(conn, PUBLISH, 1, Step.CHECKS).job
    second = jobs.create(conn, PUBLISH, 2, Step.CHECKS).job
    with psycopg.connect(hive_db_url) as other, other.transaction():
        (locked,) = jobs.claim(other, "a", kind=PUBLISH, batch=1)
        assert locked.id == first.id
        # not committed: the row is locked, and this claim goes past it at once
        assert [j.id for j in jobs.claim(conn, "b", kind=PUBLISH)] == [second.id]


def test_a_write_at_an_old_epoch_does_not_land(conn):
    jobs.create(conn, PUBLISH, 1, Step.CHECKS)
    (old,) = jobs.claim(conn, "a", kind=PUBLISH)
    run_out(conn, old.id)
    (new,) = jobs.claim(conn, "b", kind=PUBLISH)
    assert jobs.advance(conn, old, Step.GATE, "late") is None
    assert jobs.renew(conn, old) is None
    assert jobs.release(conn, old) is None
    assert jobs.finish(conn, old, JobState.DONE, Step.DONE, "late") is None
    assert jobs.park(conn, old, key="approve:1") is None
    assert jobs.begin_effect(conn, old, "merge") is None
    assert jobs.effects(conn, old.id) == []
    assert conn.execute("SELECT count(*) FROM hive.queen_wait").fetchone() == (0,)
    moved = jobs.advance(conn, new, Step.GATE, "checks passed")
    assert moved is not None and (moved.step, moved.detail) == (Step.GATE, "checks passed")


def test_finish_ends_the_job_and_frees_its_issue(conn):
    jobs.create(conn, PUBLISH, 1, Step.CHECKS)
    (job,) = jobs.claim(conn, "a", kind=PUBLISH)
    with pytest.raises(ValueError, match="does not end"):
        jobs.finish(conn, job, JobState.PARKED, Step.GATE, None)
    ended = jobs.finish(conn, job, JobState.DONE, Step.DONE, "merged as abc")
    assert ended is not None and ended.state is JobState.DONE and ended.finished_at
    assert ended.claimed_by is None and jobs.live(conn, PUBLISH, 1) is None


def test_release_makes_the_job_due_at_once(conn):
    jobs.create(conn, PUBLISH, 1, Step.CHECKS)
    (job,) = jobs.claim(conn, "a", kind=PUBLISH)
    assert jobs.release(conn, job) is not None
    (again,) = jobs.claim(conn, "b", kind=PUBLISH)
    assert again.id == job.id


def test_a_parked_job_is_not_claimed_until_its_wait_resolves(conn):
    jobs.create(conn, PUBLISH, 1, Step.GATE)
    (job,) = jobs.claim(conn, "a", kind=PUBLISH)
    parked = jobs.park(conn, job, key="approve:1", payload={"why": "no checks"}, detail="waits")
    assert parked is not None and parked.state is JobState.PARKED and parked.wait_id
    wait = waits.get(conn, parked.wait_id)
    assert wait is not None and (wait.owner, wait.key) == (f"job:{job.id}", "approve:1")
    assert wait.payload == {"why": "no checks"} and wait.wake_at is None
    assert jobs.claim(conn, "a", kind=PUBLISH) == []
    assert jobs.unpark(conn) == []  # its wait still waits
    (moved,) = waits.resolve(conn, "approve:1")
    assert moved.woke_job == job.id
    (woken,) = jobs.claim(conn, "b", kind=PUBLISH)
    assert (woken.id, woken.step, woken.state) == (job.id, Step.GATE, JobState.READY)


def test_a_malformed_wait_parks_nothing(conn):
    jobs.create(conn, PUBLISH, 1, Step.GATE)
    (job,) = jobs.claim(conn, "a", kind=PUBLISH)
    with pytest.raises(ValueError, match="needs a key, a wake time"):
        jobs.park(conn, job)
    with pytest.raises(ValueError, match="within"):
        jobs.park(conn, job, wake_in_seconds=86401)
    assert jobs.get(conn, job.id) == job


def test_the_repair_sweep_wakes_a_job_whose_wait_moved_without_it(conn):
    jobs.create(conn, PUBLISH, 1, Step.GATE)
    (job,) = jobs.claim(conn, "a", kind=PUBLISH)
    parked = jobs.park(conn, job, key="approve:1")
    assert parked is not None
    # as if the job had been parked after the wait resolved (an older writer)
    conn.execute("UPDATE hive.queen_wait SET state = 1 WHERE id = %s", (parked.wait_id,))
    assert [j.id for j in jobs.unpark(conn, parked.wait_id)] == [job.id]
    assert jobs.unpark(conn) == []


def test_cancel_ends_the_live_jobs_of_an_issue_and_their_waits(conn):
    jobs.create(conn, PUBLISH, 1, Step.GATE)
    jobs.create(conn, PUBLISH, 2, Step.CHECKS)
    (job, other) = jobs.claim(conn, "a", kind=PUBLISH)
    parked = jobs.park(conn, job, key="approve:1")
    assert parked is not None and parked.wait_id is not None
    (cancelled,) = jobs.cancel(conn, 1, "cancelled by hand")
    assert cancelled.state is JobState.CANCELLED and cancelled.detail == "cancelled by hand"
    wait = waits.get(conn, parked.wait_id)
    assert wait is not None and wait.state == CANCELLED
    assert waits.resolve(conn, "approve:1") == []
    assert jobs.cancel(conn, 1, "again") == []
    # the holder of a claim of a cancelled job writes nothing more
    jobs.create(conn, PUBLISH, 3, Step.CHECKS)
    (held,) = jobs.claim(conn, "a", kind=PUBLISH)
    jobs.cancel(conn, 3, "stop", kind=PUBLISH)
    assert jobs.begin_effect(conn, held, "merge") is None
    assert jobs.advance(conn, held, Step.GATE, None) is None
    assert jobs.get(conn, other.id) == other  # another issue's job is untouched


def test_an_effect_is_journaled_before_and_done_after_once(conn):
    jobs.create(conn, PUBLISH, 1, Step.MERGE)
    (job,) = jobs.claim(conn, "a", kind=PUBLISH)
    begun = jobs.begin_effect(conn, job, "merge")
    assert begun is not None and not begun.done and begun.result is None
    # begun again before it was done: the same row, still to be acted on
    again = jobs.begin_effect(conn, job, "merge")
    assert again is not None and not again.done
    done = jobs.finish_effect(conn, job.id, "merge", {"sha": "abc"})
    assert done is not None and done.done and done.done_at is not None
    assert jobs.finish_effect(conn, job.id, "merge", {"sha": "other"}) is None
    after = jobs.begin_effect(conn, job, "merge")
    assert after is not None and after.done and after.result == {"sha": "abc"}
    assert jobs.finish_effect(conn, job.id, "never begun", 1) is None
    assert [(e.effect_key, e.done) for e in jobs.effects(conn, job.id)] == [("merge", True)]


def test_a_job_created_or_woken_notifies_hive_jobs(conn, hive_db_url):
    with psycopg.connect(hive_db_url, autocommit=True) as listener:
        listener.execute("LISTEN hive_jobs")
        made = jobs.create(conn, PUBLISH, 1, Step.GATE).job
        (job,) = jobs.claim(conn, "a", kind=PUBLISH)
        assert jobs.park(conn, job, key="k") is not None
        waits.resolve(conn, "k")
        got = [n.payload for n in listener.notifies(timeout=5, stop_after=2)]
    assert got == [str(made.id), str(made.id)]


def test_due_in_seconds_names_the_nearest_ready_job(conn):
    assert jobs.due_in_seconds(conn, PUBLISH) is None
    jobs.create(conn, PUBLISH, 1, Step.CHECKS)
    due = jobs.due_in_seconds(conn, PUBLISH)
    assert due is not None and due <= 0
    jobs.claim(conn, "a", kind=PUBLISH)
    due = jobs.due_in_seconds(conn, PUBLISH)
    assert due is not None and CLAIM_TTL_SECONDS - 5 < due <= CLAIM_TTL_SECONDS
