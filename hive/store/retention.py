"""Retention's deletes (hive.rules.retention), each one small batch in one statement.

- `prune_issues` takes up to `issues` closed issues past the cutoff with no order in
  flight. For them it deletes up to `rows` transcript lines, up to `rows` history rows,
  and their bundles. An issue whose rows are all gone is no longer found, so repeated
  batches walk through the backlog.
- `prune_reports` deletes up to `rows` round reports older than the cutoff.
- `prune_checks` deletes up to `rows` check runs of those issues, none of a live job.
- `prune_jobs` then deletes up to `jobs` of their ended jobs that no check run names
  any more. Each goes with its effects journal and its waits, in one statement.

The rule decides what may go (`job_prunable`, `wait_prunable`). The states it allows are
passed to the SQL."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from hive.rules.jobs import JobState
from hive.rules.retention import (
    PRUNE_BATCH_ISSUES,
    PRUNE_BATCH_JOBS,
    PRUNE_BATCH_ROWS,
    Order,
    job_prunable,
    wait_prunable,
)
from hive.rules.waits import WaitState
from hive.store.db import Db, dicts, one_dict

# the states the rule lets go, as the SQL compares them
_JOB_STATES = [str(s) for s in JobState if job_prunable(s)]
_WAIT_STATES = [int(s) for s in WaitState if wait_prunable(s)]


@dataclass(frozen=True)
class IssuesPruned:
    """What one batch of `prune_issues` deleted."""

    issues: int  # closed issues the batch took
    transcript_lines: int
    history_rows: int
    bundles: int

    def full(self, issues: int = PRUNE_BATCH_ISSUES, rows: int = PRUNE_BATCH_ROWS) -> bool:
        """Whether the batch hit a limit, so more may be due."""
        return self.issues >= issues or self.transcript_lines >= rows or self.history_rows >= rows


def prune_issues(
    db: Db, cutoff: datetime, issues: int = PRUNE_BATCH_ISSUES, rows: int = PRUNE_BATCH_ROWS
) -> IssuesPruned:
    found = one_dict(
        db, "retention_prune_issues", {"cutoff": cutoff, "batch_issues": issues, "batch_rows": rows}
    )
    assert found is not None
    return IssuesPruned(**{k: int(v) for k, v in found.items()})


def prune_reports(db: Db, cutoff: datetime, rows: int = PRUNE_BATCH_ROWS) -> int:
    """Round reports deleted (up to `rows`)."""
    found = one_dict(db, "retention_prune_reports", {"cutoff": cutoff, "batch_rows": rows})
    assert found is not None
    return int(found["reports"])


@dataclass(frozen=True)
class JobsPruned:
    """What one batch of `prune_jobs` deleted."""

    jobs: int
    effects: int
    waits: int

    def full(self, jobs: int = PRUNE_BATCH_JOBS) -> bool:
        """Whether the batch hit its limit, so more may be due."""
        return self.jobs >= jobs


def prune_checks(db: Db, cutoff: datetime, rows: int = PRUNE_BATCH_ROWS) -> int:
    """Delete up to `rows` check runs of closed issues past the cutoff. A live job's runs
    stay."""
    params = {"cutoff": cutoff, "batch_rows": rows, "job_states": _JOB_STATES}
    found = one_dict(db, "retention_prune_checks", params)
    assert found is not None
    return int(found["check_runs"])


def prune_jobs(db: Db, cutoff: datetime, jobs: int = PRUNE_BATCH_JOBS) -> JobsPruned:
    """Delete up to `jobs` ended jobs of closed issues past the cutoff, with their effects
    and their waits. A job that a check run still names waits for `prune_checks`. A job
    that owns a waiting wait stays."""
    params = {
        "cutoff": cutoff,
        "batch_jobs": jobs,
        "job_states": _JOB_STATES,
        "wait_states": _WAIT_STATES,
    }
    found = one_dict(db, "retention_prune_jobs", params)
    assert found is not None
    return JobsPruned(**{k: int(v) for k, v in found.items()})


def retired_issues(db: Db, cutoff: datetime, numbers: Iterable[int]) -> list[int]:
    """Of `numbers`, the issues closed at or before `cutoff` with no order in flight."""
    params = {"cutoff": cutoff, "numbers": list(numbers)}
    return [int(r["number"]) for r in dicts(db, "retention_retired_issues", params)]


def orders_of(db: Db, numbers: Iterable[int]) -> dict[int, Order]:
    """Each of `numbers` with what the store says of its order (NONE when it has none)."""
    wanted = list(numbers)
    found = {n: Order.NONE for n in wanted}
    for row in dicts(db, "retention_orders_in_flight", {"numbers": wanted}):
        found[int(row["issue"])] = Order.IN_FLIGHT if row["in_flight"] else Order.ENDED
    return found
