"""Jobs (RULES 10): durable procedures of named steps, and the publish job's steps.

A job's row records its current step. The engine runs the step's handler, which answers a
`Result`; `next_step` says where that answer leads. An answer the table does not list for
that step leads nowhere (None), and the job fails saying so rather than guessing.

The publish job: CHECKS -> GATE -> MERGE -> PUSH -> CLOSE -> DONE. A red check or a merge
conflict sends the work back (SENT_BACK); a base that moved since the checks ran goes from
MERGE back to CHECKS, and one that moved under the push back to MERGE; a shut gate parks
the job on a wait and runs GATE again when the wait ends. An attempt that is no longer
accepted (a person rejected it, its criteria changed) ends the job from any step (GONE).
A forge's step that hands the work to a person (a park past its bound, a merge nobody
accepted) ends the job as a send-back does (ESCALATED).
"""

from __future__ import annotations

from enum import StrEnum

from hive.rules.reviewer import merge_gate_open

# An accept this old whose publish job does not exist lost it: the verdict and the job are
# two writes, and the process or the store may go between them. The job is made then; the
# reviewer makes it within milliseconds of its verdict, so this never races it.
LOST_JOB_SECONDS = 30


class JobKind(StrEnum):
    """What a job does (`queen_job.kind`)."""

    PUBLISH = "publish"


class JobState(StrEnum):
    """Where a job row is (`queen_job.state`): only READY is claimed, only READY and
    PARKED are live (at most one live job of a kind per issue)."""

    READY = "ready"
    PARKED = "parked"
    DONE = "done"
    FAILED = "failed"
    CANCELLED = "cancelled"


LIVE_STATES = frozenset({JobState.READY, JobState.PARKED})


class Step(StrEnum):
    """The publish job's steps (`queen_job.step`). DONE and SENT_BACK end the job."""

    CHECKS = "checks"
    GATE = "gate"
    MERGE = "merge"
    PUSH = "push"
    CLOSE = "close"
    DONE = "done"
    SENT_BACK = "sent back"
    DROPPED = "dropped"


class Result(StrEnum):
    """What a step's handler answers."""

    PASSED = "passed"  # every check ran and passed (or, at GATE, the checks opened it)
    RED = "red"  # a check failed, timed out or could not run
    NO_CHECKS = "no checks"  # none configured: the gate waits for a person
    APPROVED = "approved"  # the gate is open
    MERGED = "merged"  # the merge commit exists
    CONFLICT = "conflict"  # the branch does not merge into the moved base
    MOVED = "moved"  # the base moved: under the push (merge again), since the checks ran
    PUSHED = "pushed"  # the base now points at the merge commit
    CLOSED = "closed"  # the issue is closed with the merge sha
    PARKED = "parked"  # the handler parked the job on a wait: the step runs again after it
    GONE = "gone"  # the attempt is no longer the accepted current one: nothing to publish
    ESCALATED = "escalated"  # the work went to a person with a sentence (a bound, a merge)


END_STEPS = frozenset({Step.DONE, Step.SENT_BACK, Step.DROPPED})

# The whole table; PARKED keeps any live step and is not listed.
PUBLISH_STEPS: dict[Step, dict[Result, Step]] = {
    Step.CHECKS: {
        Result.PASSED: Step.GATE,
        Result.NO_CHECKS: Step.GATE,
        Result.RED: Step.SENT_BACK,
        Result.ESCALATED: Step.SENT_BACK,
    },
    Step.GATE: {Result.APPROVED: Step.MERGE, Result.PASSED: Step.MERGE, Result.MOVED: Step.CHECKS},
    Step.MERGE: {
        Result.MERGED: Step.PUSH,
        Result.CONFLICT: Step.SENT_BACK,
        Result.MOVED: Step.CHECKS,
        Result.ESCALATED: Step.SENT_BACK,
    },
    Step.PUSH: {
        Result.PUSHED: Step.CLOSE,
        Result.MOVED: Step.MERGE,
        Result.ESCALATED: Step.SENT_BACK,
    },
    Step.CLOSE: {Result.CLOSED: Step.DONE},
}
FIRST_STEP = Step.CHECKS


def next_step(step: str, result: str) -> Step | None:
    """The step after `step` answered `result`, or None when that answer leads nowhere
    (an unknown or ended step, or an answer the step cannot give). PARKED keeps the step."""
    try:
        at, answer = Step(step), Result(result)
    except ValueError:
        return None
    if at in END_STEPS:
        return None
    if answer == Result.PARKED:
        return at
    if answer == Result.GONE:
        return Step.DROPPED
    return PUBLISH_STEPS[at].get(answer)


def fetches_base(step: str, fetched: bool) -> bool:
    """Whether a publish step fetches the base tip before it merges, `fetched` saying
    whether this job's run (its claim) has fetched it already: CHECKS, MERGE and PUSH
    fetch once a run (a run starts with a claim: after a park or a restart the base is
    fetched again, and the push's compare-and-swap catches a base that moved since; a
    push that found it moved ends what the run knows), GATE never (it asks about the
    merge the checks ran on)."""
    return step in (Step.CHECKS, Step.MERGE, Step.PUSH) and not fetched


def gate_answer(
    *, merge_known: bool, checks_ran: int, checks_passed: int, approved: bool, local: bool
) -> Result:
    """What the publish gate answers.

    `merge_known` says whether there is a merge to ask about (none when no check is
    configured); `checks_ran` and `checks_passed` count the checks recorded on it;
    `approved` says whether a person approved the work; `local` says whether the hive
    runs the checks itself (no forge).

    PASSED: a check ran on the merge and every one passed. APPROVED: a person opened it.
    MOVED: the hive checks itself and no check ran on this merge (a new claim merged on
    a base another job's fetch moved since the checks ran), so CHECKS runs again.
    PARKED: the gate waits for a person. Zero checks never open the gate."""
    if merge_known and merge_gate_open(checks_ran, checks_passed):
        return Result.PASSED
    if approved:
        return Result.APPROVED
    if local and merge_known and checks_ran == 0:
        return Result.MOVED
    return Result.PARKED


def ends_job(step: str) -> bool:
    """Whether a job at `step` has nothing left to run."""
    return step in END_STEPS
