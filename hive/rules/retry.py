"""Back-off for an issue whose attempts keep failing: an agent that always fails must not
burn its key and the swarm's capacity every round.

A failure is an attempt that ended without its work and without a cause outside the
agent: `ended badly`, `ended unexpectedly`, and the reapers' endings (`reaped at boot`,
`reaped: runner silent`, `reaped: no completion within N minutes`). `finished` is not a
failure; `handed back` is not (the drain took it: its issue is free at once, RULES 4);
`refused` and `quota exhausted` are the provider's, and rest the key instead (RULES 7);
`cancelled` is a person's. Any of those ends a run of failures.

The first failure is retried at once (FREE_RETRIES): one killed runner, one restarted
Queen or one flaky turn is recovery, and another runner takes the order over at once.
From the second failure in a row the issue waits, from the end of its last attempt,
FIRST_RETRY_SECONDS doubling with each further failure, capped at MAX_RETRY_SECONDS:
after 2 failures 60 s, 3: 120 s, 4: 240 s, ... 3600 s from the 8th on. Pure: time
comes in as arguments.
"""

from __future__ import annotations

from hive.rules.outcome_codes import OutcomeCode

FREE_RETRIES = 1
FIRST_RETRY_SECONDS = 60
MAX_RETRY_SECONDS = 3600
FAILED_CODES = frozenset(
    {
        OutcomeCode.ENDED_BADLY,
        OutcomeCode.ENDED_UNEXPECTEDLY,
        OutcomeCode.REAPED_AT_BOOT,
        OutcomeCode.REAPED_RUNNER_SILENT,
        OutcomeCode.REAPED_NO_COMPLETION,
    }
)
# 2**6 * 60 s is past the cap already: a longer run of failures needs no bigger power
_MAX_DOUBLINGS = 6


def is_failure(code: OutcomeCode | None) -> bool:
    """Whether an attempt that ended with outcome `code` failed (None: it has not ended)."""
    return code in FAILED_CODES


def failures_after(before: int, code: OutcomeCode | None) -> int:
    """Failures in a row once an attempt ends with outcome `code`, `before` of them
    preceding it: one more on a failure, none after anything else."""
    return before + 1 if is_failure(code) else 0


def retry_after_seconds(failures_in_a_row: int) -> int:
    """How long after its last attempt ended an issue waits: 0 up to FREE_RETRIES
    failures in a row, then FIRST_RETRY_SECONDS doubling with each further failure,
    capped at MAX_RETRY_SECONDS."""
    if failures_in_a_row <= FREE_RETRIES:
        return 0
    doublings = min(failures_in_a_row - FREE_RETRIES - 1, _MAX_DOUBLINGS)
    wait: int = min(FIRST_RETRY_SECONDS * 2**doublings, MAX_RETRY_SECONDS)
    return wait


def may_redispatch(failures_in_a_row: int, since_last_end_seconds: float) -> bool:
    """Whether the issue may be dispatched again, `since_last_end_seconds` after its last
    attempt ended."""
    return since_last_end_seconds >= retry_after_seconds(failures_in_a_row)


def waiting_sentence(failures_in_a_row: int, since_last_end_seconds: float, last: str) -> str:
    """The round report's reason for an issue still backing off (`last`: its outcome)."""
    left = max(1, round(retry_after_seconds(failures_in_a_row) - since_last_end_seconds))
    return f"waits {left} s more: its last {failures_in_a_row} attempts failed (the last: {last})"
