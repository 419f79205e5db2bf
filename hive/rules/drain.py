"""The drain card (seed 002, drain.t27): when a draining process may exit.

On SIGTERM a process sorts the work it holds: rows the store keeps (rounds, jobs, waits)
are left to the next process; a review is stopped, because a stop loses at most one review,
which is redone; a bee is held, because what it has done lives in its conversation, until
it ends or the cap passes, and then it is handed back and its work salvaged into its
branch. Names are the card's own.
"""

from __future__ import annotations

from enum import IntEnum

from hive.rules.leases import reclaimable
from hive.rules.signals import turn_signal
from hive.rules.waits import pickup_after_seconds

# --- 1. What a draining process holds ---------------------------------------------------


class WorkKind(IntEnum):
    """What a piece of held work is, with the card's numbers."""

    BEE = 0  # a bee this process runs for its runner: a turn of up to an hour
    REVIEW = 1  # one review, a turn bounded by REVIEW_BOUND_SECONDS
    ROUND = 2  # a Queen round: a reconcile that re-reads the store and decides again
    JOB = 3  # a step of a job
    WAIT = 4  # a wait row this process claimed


WK_BEE = WorkKind.BEE
WK_REVIEW = WorkKind.REVIEW
WK_ROUND = WorkKind.ROUND
WK_JOB = WorkKind.JOB
WK_WAIT = WorkKind.WAIT
WORK_KINDS = len(WorkKind)

# The name of each kind, by its number, for what the operator reads.
KIND_NAMES = ("bee", "review", "round", "job", "wait")

# signals.X_KILL and signals.X_NONE, written as literals as the card does (pinned by tests).
X_KILL_LIT = 2
X_NONE_LIT = 99


def row_keeps(kind: int) -> bool:
    """Whether the store keeps this work as it stands, so a stop throws nothing away.

    A wait is a row a deploy never writes; a job is a row whose effects are journaled; a
    round is decided again from the store by the next round. A review and a bee are turns:
    what the turn has done so far lives in its process.
    """
    return kind in (WK_WAIT, WK_JOB, WK_ROUND)


# A review's bound is the reviewer's REVIEW_ROW_SECONDS; a bee names none (0 = an hour).
REVIEW_BOUND_SECONDS = 300


def bound_of(kind: int) -> int:
    """A turn's own bound in seconds, as turn_signal reads it (0 is TURN_MAX_SECONDS)."""
    if kind == WK_REVIEW:
        return REVIEW_BOUND_SECONDS
    return 0


# The most work a drain may throw away to end sooner: one review. Chosen, not measured.
STOP_LOSS_SECONDS = 300


def redo_is_cheap(bound_seconds: int) -> bool:
    """A turn whose own timer kills it within STOP_LOSS_SECONDS loses at most that to a stop."""
    return turn_signal(STOP_LOSS_SECONDS, bound_seconds) == X_KILL_LIT


# --- 2. What the drain owes each piece of work ------------------------------------------


class Verdict(IntEnum):
    """What the drain owes a piece of work, with the card's numbers."""

    DONE = 0  # its work ended; nothing is owed
    LEAVE = 1  # the store keeps it; the next process takes it up
    STOP = 2  # not waited for: stopped when the process exits (abort, grace, escalation)
    HOLD = 3  # the drain waits for it to end on its own
    HAND_BACK = 4  # held to the cap and still running: stopped, salvaged, its row ended now


DV_DONE = Verdict.DONE
DV_LEAVE = Verdict.LEAVE
DV_STOP = Verdict.STOP
DV_HOLD = Verdict.HOLD
DV_HAND_BACK = Verdict.HAND_BACK

# The name of each verdict, by its number, for what the operator reads.
VERDICT_NAMES = ("done", "leave", "stop", "hold", "hand back")


def drain_verdict(kind: int, ended: bool, waited_seconds: int, cap_seconds: int) -> Verdict:
    """What the drain owes one piece of work after waiting `waited_seconds`.

    A bee is held until it ends or the cap passes (a deploy does not cut a bee short); a
    review is not held (a stop loses at most one review); rows are left.
    """
    if ended:
        return DV_DONE
    if row_keeps(kind):
        return DV_LEAVE
    if redo_is_cheap(bound_of(kind)):
        return DV_STOP
    if waited_seconds >= cap_seconds:
        return DV_HAND_BACK
    return DV_HOLD


# --- 3. What keeps working while something holds ----------------------------------------


def takes_new_work(starts_a_bee_here: bool, holding: int) -> bool:
    """Whether a source of work starts anything new during the drain.

    Nothing that would start a bee here (it would hold the drain for its hour). The rest
    keeps going while a held bee keeps the process alive, since the next process cannot
    start before this one ends; once nothing holds, the process is leaving.
    """
    if starts_a_bee_here:
        return False
    return holding > 0


# --- 4. The hard cap --------------------------------------------------------------------

# What must still fit after the cap, before the platform's SIGKILL: the hand-back of every
# held bee, side by side under one deadline, then the server's own close. Chosen.
HAND_BACK_SECONDS = 20
EXIT_SECONDS = 5


def drain_cap_seconds(runner_drain_seconds: int, platform_seconds: int) -> int:
    """The cap: the runner's drain, never so late that the hand-back and exit miss the kill.

    A platform drain of 0 is one this process cannot read: the runner's drain stands.
    """
    if platform_seconds == 0:
        return runner_drain_seconds
    if platform_seconds <= HAND_BACK_SECONDS + EXIT_SECONDS:
        return 0
    latest = platform_seconds - HAND_BACK_SECONDS - EXIT_SECONDS
    if runner_drain_seconds < latest:
        return runner_drain_seconds
    return latest


# --- 5. The exit ------------------------------------------------------------------------

# turn_stop's promises, written as literals as the card does (pinned by tests).
TURN_STOP_GRACE_MS = 3000
LANE_FREE_MS = 5000


class ExitStep(IntEnum):
    """Whether a draining process exits now or waits, with the card's numbers."""

    NOW = 0
    WAIT = 1


EXIT_NOW = ExitStep.NOW
EXIT_WAIT = ExitStep.WAIT


def exit_step(holding: int, stopping: int, since_stop_ms: int) -> ExitStep:
    """Exit once nothing holds and every stopped turn has had its stop land."""
    if holding > 0:
        return EXIT_WAIT
    if stopping == 0:
        return EXIT_NOW
    if since_stop_ms >= LANE_FREE_MS:
        return EXIT_NOW
    return EXIT_WAIT


# --- 6. When the work is free for another process ---------------------------------------

# leases.TASK_LEASE_TTL_SECONDS, written as a literal as the card does (pinned by tests).
TASK_LEASE_TTL_LIT = 180


def bee_free_after_seconds(handed_back: bool, since_renewal: int) -> int:
    """Seconds after the exit before another process may take a stopped bee's issue.

    Handed back, its row was ended at the cap: free at once. Left claimed, it waits until
    its task lease lapses, counted from the last renewal.
    """
    if handed_back:
        return 0
    if reclaimable(False, since_renewal):
        return 0
    return TASK_LEASE_TTL_LIT - since_renewal


def wait_free_after_seconds(claimed: bool, since_claim: int) -> int:
    """Seconds after the exit before another process may take a claimed wait row."""
    return pickup_after_seconds(claimed, since_claim)
