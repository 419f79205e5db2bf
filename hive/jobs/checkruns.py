"""The checks a publish job runs on its merge (CHECKS, without a forge): each
`HIVE_CHECK_<NAME>` not yet run on it, one after another in a kept tree of the merge
(`hive.git.kept`: the checks' trees stay between jobs, each brought to the next merge by
its changes), each run recorded and counted. The publisher's close stops the checks
running then; their job is run again later."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from dulwich.repo import Repo

from hive.agents.checks import CheckTurn
from hive.git.kept import KeptTrees
from hive.git.scratch import ScratchTree
from hive.jobs.engine import StepContext
from hive.metrics import HiveMetrics
from hive.store import publish
from hive.store.publish import PublishFacts


class CheckRuns:
    """A publisher's checks: the trees they run in (under `trees`) and the checks running
    now, which `close` stops."""

    def __init__(self, db: Any, metrics: HiveMetrics, timeout_seconds: float, trees: Path) -> None:
        self.db = db
        self.metrics = metrics
        self.timeout_seconds = timeout_seconds
        self._lock = threading.Lock()
        self._running: list[CheckTurn] = []
        self._closed = False
        # the checks' trees, kept between jobs and brought to each merge by its changes
        self._trees = KeptTrees(trees)

    def close(self) -> None:
        """Stop the checks running now (safe twice)."""
        with self._lock:
            self._closed = True
            running = list(self._running)
        for check in running:
            check.stop("the process is stopping")

    def take(self, repo: Repo, merge_sha: str) -> ScratchTree:
        """A tree holding `merge_sha` for `run_all`, which gives it back."""
        return self._trees.take(repo, merge_sha)

    def run_all(
        self,
        ctx: StepContext,
        facts: PublishFacts,
        merge_sha: str,
        todo: list[tuple[str, str]],
        scratch: ScratchTree,
    ) -> None:
        """Run each (name, command) of `todo` in `scratch`, in order, and give the tree
        back."""
        try:
            for name, command in todo:
                self._run(ctx, facts, merge_sha, name, command, scratch.path)
        finally:
            self._trees.give_back(scratch)

    def _run(
        self,
        ctx: StepContext,
        facts: PublishFacts,
        merge_sha: str,
        name: str,
        command: str,
        scratch: Any,
    ) -> None:
        check = CheckTurn(
            name,
            command,
            scratch,
            issue=facts.issue,
            timeout_seconds=self.timeout_seconds,
        )
        with self._lock:
            if self._closed:
                raise RuntimeError("the publisher is stopping")
            self._running.append(check)
        try:
            run = ctx.held_while(check.run, lambda: check.stop("the job's claim was lost"))
        finally:
            with self._lock:
                self._running.remove(check)
        if self._closed:
            raise RuntimeError("the publisher stopped during a check")
        publish.record_check(
            self.db,
            issue=facts.issue,
            attempt=facts.attempt,
            job=ctx.job.id,
            merge_sha=merge_sha,
            name=name,
            result=run.result.value,
            exit_code=run.exit_code,
            seconds=run.seconds,
            output_tail=run.tail,
        )
        self.metrics.checks.labels(check=name, result=run.result.value).inc()
        ctx.renew()
