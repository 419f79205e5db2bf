"""The pruner (hive.rules.retention). It keeps the store and the Queen's checkout from
growing without end, in a Queen's process.

A pass deletes, in small batches, what issues closed longer than HIVE_RETENTION_DAYS
left. That is their transcripts, attempt history, bundles, check runs and ended jobs,
with the jobs' effects and waits. It also deletes the round reports older than that. It
removes her worktrees of ended orders and deletes the `queen-<issue>` branches of those
retired issues. Now and then it repacks her checkout without what no branch reaches.

The loop looks every PASS_AGAIN_SECONDS and passes when the rule says one is due. One
is due at once when the last pass filled a batch, otherwise hourly.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from hive.actors.loop import LoopActor
from hive.actors.queen.facts import utcnow
from hive.git.housekeeping import Repacked, delete_branches, queen_branches, repack
from hive.git.repo import Checkout, own_repo
from hive.git.worktrees import list_worktrees, prune_worktrees, remove_worktree
from hive.metrics import HiveMetrics
from hive.rules import retention
from hive.store import retention as store
from hive.store.db import Db
from supervisors import Registry

log = logging.getLogger("hive.retention")

# one pass deletes batches for at most this long, so a stop never waits on it
PASS_BUDGET_SECONDS = 2.0


@dataclass(frozen=True)
class RetentionConfig:
    days: int = retention.RETENTION_DAYS_DEFAULT
    batch_issues: int = retention.PRUNE_BATCH_ISSUES
    batch_rows: int = retention.PRUNE_BATCH_ROWS
    batch_jobs: int = retention.PRUNE_BATCH_JOBS
    pass_budget_seconds: float = PASS_BUDGET_SECONDS


@dataclass
class Pass:
    """What one pass removed. It is false when it removed nothing, or was not due."""

    transcript_lines: int = 0
    history_rows: int = 0
    bundles: int = 0
    reports: int = 0
    check_runs: int = 0
    jobs: int = 0
    effects: int = 0
    waits: int = 0
    worktrees: int = 0
    branches: int = 0
    repacked: Repacked | None = None
    more_due: bool = False
    batches: int = 0  # delete statements of closed issues' rows this pass ran

    def __bool__(self) -> bool:
        return any(self.removed().values()) or bool(self.repacked)

    def removed(self) -> dict[str, int]:
        return {
            "transcript_lines": self.transcript_lines,
            "history_rows": self.history_rows,
            "bundles": self.bundles,
            "reports": self.reports,
            "check_runs": self.check_runs,
            "jobs": self.jobs,
            "effects": self.effects,
            "waits": self.waits,
            "worktrees": self.worktrees,
            "branches": self.branches,
        }

    def __str__(self) -> str:
        parts = [f"{n} {what.replace('_', ' ')}" for what, n in self.removed().items() if n]
        if self.repacked:
            r = self.repacked
            parts.append(f"repacked ({r.bytes_before} -> {r.bytes_after} bytes)")
        more = "; more due" if self.more_due else ""
        return "retention: removed " + (", ".join(parts) or "nothing") + more


class Retention:
    """The pruner's work. `now` and `monotonic` are the clocks (tests move them)."""

    def __init__(
        self,
        db: Db,
        checkout: Checkout,
        metrics: HiveMetrics,
        config: RetentionConfig,
        now: Callable[[], datetime] = utcnow,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.db = db
        self.checkout = checkout
        self.metrics = metrics
        self.config = config
        self.now = now
        self.monotonic = monotonic
        self._due_at = monotonic()
        self._repacked_at = monotonic()
        self._branches_since_repack = 0

    def run_once(self, force: bool = False) -> Pass:
        """Run one pass when one is due, or with `force`. Otherwise return an empty Pass."""
        started = self.monotonic()
        if not force and started < self._due_at:
            return Pass()
        done = Pass()
        cutoff = retention.cutoff(self.now(), self.config.days)
        self._prune_store(done, cutoff, started)
        self._tidy_checkout(done, cutoff)
        self._due_at = self.monotonic() + retention.next_pass_seconds(done.more_due)
        for what, n in done.removed().items():
            if n:
                self.metrics.pruned.labels(what=what).inc(n)
        return done

    def close(self) -> None:
        """Let nothing go. Every pass is a few short statements."""

    def _prune_store(self, done: Pass, cutoff: datetime, started: float) -> None:
        db, cfg = self.db, self.config
        while True:
            batch = store.prune_issues(db, cutoff, cfg.batch_issues, cfg.batch_rows)
            done.batches += 1
            done.transcript_lines += batch.transcript_lines
            done.history_rows += batch.history_rows
            done.bundles += batch.bundles
            reports = store.prune_reports(db, cutoff, cfg.batch_rows)
            done.reports += reports
            # check runs first: a job goes once no check run names it
            checks = store.prune_checks(db, cutoff, cfg.batch_rows)
            done.check_runs += checks
            jobs = store.prune_jobs(db, cutoff, cfg.batch_jobs)
            done.jobs += jobs.jobs
            done.effects += jobs.effects
            done.waits += jobs.waits
            full = (
                batch.full(cfg.batch_issues, cfg.batch_rows)
                or reports >= cfg.batch_rows
                or checks >= cfg.batch_rows
                or jobs.full(cfg.batch_jobs)
            )
            if not full:
                done.more_due = False
                return
            done.more_due = True
            if self.monotonic() - started >= cfg.pass_budget_seconds:
                return

    def _tidy_checkout(self, done: Pass, cutoff: datetime) -> None:
        checkout = self.checkout
        with own_repo(checkout) as repo:
            worktrees = [w for w in list_worktrees(repo) if w.issue is not None]
            for info in worktrees:
                assert info.issue is not None
                # under the checkout's lock, as a cut: no cut of this issue starts between
                # the look at its order and the removal
                with checkout.lock:
                    order = store.orders_of(self.db, [info.issue])[info.issue]
                    if not retention.worktree_removable(order, info.age_seconds):
                        continue
                    remove_worktree(repo, info.path)
                done.worktrees += 1
                log.info(
                    "worktree removed: its order is %s", order.value, extra={"issue": info.issue}
                )
            prune_worktrees(repo)
            retired = store.retired_issues(self.db, cutoff, queen_branches(repo))
            gone = delete_branches(repo, retired)
            done.branches += len(gone)
            self._branches_since_repack += len(gone)
            since = self.monotonic() - self._repacked_at
            if retention.repack_due(since, self._branches_since_repack):
                done.repacked = repack(repo)
                if not done.repacked.skipped:
                    self._repacked_at = self.monotonic()
                    self._branches_since_repack = 0


class RetentionActor(LoopActor):
    """The pruner's actor, registered as "retention". It looks every PASS_AGAIN_SECONDS
    and passes when one is due."""

    def __init__(
        self,
        db: Db,
        checkout: Checkout,
        metrics: HiveMetrics,
        names: Registry,
        config: RetentionConfig,
    ) -> None:
        super().__init__(
            "retention",
            Retention(db, checkout, metrics, config),
            retention.PASS_AGAIN_SECONDS,
            registry=names,
        )
