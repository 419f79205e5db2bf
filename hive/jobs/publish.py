"""The publish job's steps (DESIGN 10, RULES 8 and 10). They publish accepted work.

A verdict of ACCEPT creates a `publish` job for the attempt. The job runner claims it
and runs its steps here. Each step answers a `hive.rules.jobs.Result`.

- CHECKS fetches the base tip and merges the branch into it with dulwich
  (`hive.git.merge`). The merge commit's time is the job's creation, so the same base
  and head always give the same merge sha. It then runs every `HIVE_CHECK_<NAME>` not
  yet run on that merge, in a scratch tree of it (`hive.jobs.checkruns`). That tree is
  a kept tree (`hive.git.kept`), brought to the merge by its changes and verified
  against what a check may have left. A conflict or a red check sends the work back
  with the paths or the check's output tail. At the send-back ceiling it escalates.
- GATE asks `hive.rules.jobs.gate_answer`. The gate opens when at least one check ran
  on this merge and every check passed, or when a person approved the work
  (`hive approve N`). A merge that no check ran on goes back to CHECKS; that is a new
  claim's merge, on a base another job's fetch moved. Otherwise the job parks on the
  wait `approve:<issue>`.
- MERGE merges again, on the base as it is now. A base that moved since the checks ran
  goes back to CHECKS.
- PUSH pushes the merge to `HIVE_BASE_REF` of `HIVE_REPO_URL`, with compare-and-swap on
  the base it was made on. It is the journaled effect `push:<sha>`, so a process killed
  mid-push never pushes twice. A base that moved goes back to MERGE.
- CLOSE records the merge on the order and closes the issue naming the sha. It is the
  effect `close:<issue>:<attempt>`.

A job's run is one claim. It fetches the base once and computes its merge once
(`fetches_base`). GATE, MERGE and PUSH use what CHECKS learned. The push's
compare-and-swap catches a base that moved meanwhile: PUSH answers MOVED, the run
forgets, and MERGE fetches again. A park or a restart is a new claim, which fetches
again.

A step that finds its attempt no longer accepted answers GONE, and the job ends. A
person may have rejected it, or its criteria changed.

With a forge (HIVE_PUBLISH=github) the same job runs. CHECKS, MERGE and PUSH are then
the forge's (`ForgeSteps`): a pull request, its checks, and a merge through the forge's
API. GATE and CLOSE stay here, and the forge hears of the close (`after_close`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from dulwich.repo import Repo

from hive.git.merge import MERGE_TEXT_MAX_BYTES, Conflict, Merged, merge
from hive.git.push import Moved, push
from hive.git.repo import Checkout, own_repo, refresh_base, resolve
from hive.jobs.checkruns import CheckRuns
from hive.jobs.engine import Handler, StepContext
from hive.jobs.forge_steps import ForgeSteps, Gone
from hive.jobs.heads import head_here
from hive.jobs.memo import RunMemo
from hive.metrics import HiveMetrics
from hive.rules.branches import branch_name
from hive.rules.jobs import Result, Step, fetches_base, gate_answer
from hive.rules.lifecycle import REVIEW_STATE_OF
from hive.rules.modes import CheckResult
from hive.rules.states import ACCEPT, ci_red_event, next_state
from hive.store import publish
from hive.store.publish import CheckRow, PublishFacts

log = logging.getLogger("hive.publish")

SCRATCH_DIRNAME = "checks"
APPROVE_KEY = "approve:{issue}"
GATE_RECHECK_SECONDS = 300


@dataclass(frozen=True)
class PublishConfig:
    repo_url: str
    base: str = "main"
    checks: tuple[tuple[str, str], ...] = ()
    checks_timeout_seconds: float = 1800.0
    merge_text_max_bytes: int = MERGE_TEXT_MAX_BYTES


@dataclass(frozen=True)
class _Known:
    """What a job's run learned at its fetch. It holds the base tip and the head merged
    into it. Once CHECKS saw them all pass, it also holds the checks' runs on that merge.
    GATE, MERGE and PUSH ask about the same merge, so no check runs on it again within
    the claim."""

    base_sha: str
    head_sha: str
    merged: Merged | Conflict
    runs: tuple[CheckRow, ...] | None = None


class Publisher:
    """The publish job's handlers (`handlers()`), for the job engine."""

    def __init__(
        self,
        db: Any,
        checkout: Checkout,
        metrics: HiveMetrics,
        config: PublishConfig,
        on_merged: Callable[[int, str], None] = lambda issue, sha: None,
        forge: ForgeSteps | None = None,
    ) -> None:
        self.db = db
        self.forge = forge
        self.checkout = checkout
        self.metrics = metrics
        self.config = config
        self.on_merged = on_merged
        self._known: RunMemo[_Known] = RunMemo()
        self._checks = CheckRuns(
            db, metrics, config.checks_timeout_seconds, checkout.workdir / SCRATCH_DIRNAME
        )

    def handlers(self) -> dict[str, Handler]:
        steps: dict[Step, Callable[[StepContext], Result]] = {
            Step.CHECKS: self.checks,
            Step.GATE: self.gate,
            Step.MERGE: self.merge,
            Step.PUSH: self.push,
            Step.CLOSE: self.close_issue,
        }
        return {str(step): _guarded(fn) for step, fn in steps.items()}

    def close(self) -> None:
        """Stop the checks running now (safe twice); their job is run again later."""
        self._checks.close()

    # ---- the steps ------------------------------------------------------------------

    def checks(self, ctx: StepContext) -> Result:
        facts = self._facts(ctx)
        if self.forge is not None:
            return self.forge.checks(ctx, facts, self._red)
        with own_repo(self.checkout) as repo:
            base_sha, merged = self._merge_now(ctx, repo, facts)
            if isinstance(merged, Conflict):
                return self._red(ctx, facts, _conflict_note(base_sha, merged))
            if not self.config.checks:
                ctx.say(f"merges cleanly onto {base_sha[:12]}; no checks configured")
                return Result.NO_CHECKS
            done = {
                c.name for c in publish.checks_on(self.db, facts.issue, facts.attempt, merged.sha)
            }
            todo = [(name, cmd) for name, cmd in self.config.checks if name not in done]
            scratch = self._checks.take(repo, merged.sha) if todo else None
        if scratch is not None:
            self._checks.run_all(ctx, facts, merged.sha, todo, scratch)
        runs = publish.checks_on(self.db, facts.issue, facts.attempt, merged.sha)
        red = [run for run in runs if run.result != CheckResult.PASS]
        if red:
            first = red[0]
            note = f"check {first.name} {first.result} on {merged.sha[:12]}:\n{first.output_tail}"
            return self._red(ctx, facts, note)
        known = self._known.get(ctx.job)
        if known is not None and known.merged == merged:
            self._known.put(ctx.job, replace(known, runs=tuple(runs)))
        ctx.say(f"{len(runs)} checks passed on {merged.sha[:12]}")
        return Result.PASSED

    def gate(self, ctx: StepContext) -> Result:
        facts = self._facts(ctx)
        sha = None
        if self.forge is not None:
            sha = self.forge.gate_sha(facts)
        elif self.config.checks:  # no checks: no merge to ask about
            with own_repo(self.checkout) as repo:
                _, merged = self._merge_now(ctx, repo, facts)
            sha = merged.sha if isinstance(merged, Merged) else None
        runs = [] if sha is None else self._runs_on(ctx, facts, sha)
        passed = sum(1 for run in runs if run.result == CheckResult.PASS)
        answer = gate_answer(
            merge_known=sha is not None,
            checks_ran=len(runs),
            checks_passed=passed,
            approved=facts.approved_at is not None,
            local=self.forge is None,
        )
        if answer == Result.PASSED:
            ctx.say(f"gate open: {passed} checks passed")
            return answer
        if answer == Result.APPROVED:
            ctx.say("gate open: approved by a person")
            return answer
        if answer == Result.MOVED:
            ctx.say(f"no checks ran on the merge {str(sha)[:12]}: the base moved, checks run again")
            return answer
        if self.forge is not None:
            why = self.forge.gate_waits_because(facts)
        else:
            why = "no checks ran" if not self.config.checks else "its checks have not all passed"
        return ctx.park(
            key=APPROVE_KEY.format(issue=facts.issue),
            # the gate looks again now and then: an approval that landed between its look
            # at approved_at and this park resolved no wait
            wake_in_seconds=GATE_RECHECK_SECONDS,
            detail=f"waits for a person ({why}; zero checks never open the gate): "
            f"hive approve {facts.issue}",
        )

    def merge(self, ctx: StepContext) -> Result:
        facts = self._facts(ctx)
        if self.forge is not None:
            return self.forge.merge(ctx, facts, self._red)
        with own_repo(self.checkout) as repo:
            base_sha, merged = self._merge_now(ctx, repo, facts)
        if isinstance(merged, Conflict):
            self._red(ctx, facts, _conflict_note(base_sha, merged))
            return Result.CONFLICT
        if self.config.checks and not self._checked(ctx, facts, merged.sha):
            ctx.say(f"the base moved to {base_sha[:12]}: checks run again on the new merge")
            return Result.MOVED
        ctx.say(f"merge {merged.sha[:12]} onto {base_sha[:12]}")
        return Result.MERGED

    def push(self, ctx: StepContext) -> Result:
        facts = self._facts(ctx)
        if self.forge is not None:
            pushed = self.forge.push(ctx, facts, self._red)
            if pushed == Result.PUSHED:
                self.metrics.merges.inc()
            return pushed
        with own_repo(self.checkout) as repo:
            base_sha, merged = self._merge_now(ctx, repo, facts)
            if isinstance(merged, Conflict) or (
                self.config.checks and not self._checked(ctx, facts, merged.sha)
            ):
                ctx.say(f"the base moved to {base_sha[:12]} before the push")
                self._known.forget(ctx.job)
                return Result.MOVED
            sha = merged.sha

            def act() -> dict[str, str | None]:
                out = push(
                    repo,
                    self.config.repo_url,
                    self.config.base,
                    sha,
                    base_sha,
                    auth=self.checkout.auth,
                )
                if isinstance(out, Moved):
                    return {"moved": out.remote_sha}
                return {"pushed": out.sha}

            result = ctx.effect(f"push:{sha}", act)
        if "moved" in result:
            ctx.say(f"the base moved under the push (now {str(result['moved'])[:12]})")
            self._known.forget(ctx.job)
            return Result.MOVED
        self.metrics.merges.inc()
        ctx.say(f"pushed {sha[:12]} to {self.config.base}")
        log.info("pushed %s to %s", sha[:12], self.config.base, extra={"issue": facts.issue})
        return Result.PUSHED

    def close_issue(self, ctx: StepContext) -> Result:
        facts = self._facts(ctx, accepted=False)
        sha = publish.pushed_sha(self.db, ctx.job.id)
        if sha is None:
            raise RuntimeError("no push of this job landed, yet it reached CLOSE")

        def act() -> dict[str, float | None]:
            return {"age_seconds": publish.close_merged(self.db, facts, sha)}

        result = ctx.effect(f"close:{facts.issue}:{facts.attempt}", act)
        if result.get("age_seconds") is not None:
            self.metrics.issue_to_merge_seconds.observe(float(result["age_seconds"]))
        if self.forge is not None:
            self.forge.after_close(ctx, facts, sha)
        ctx.say(f"merged as {sha}")
        self._known.forget(ctx.job)
        self.on_merged(facts.issue, sha)
        return Result.CLOSED

    # ---- helpers ----------------------------------------------------------------------

    def _facts(self, ctx: StepContext, *, accepted: bool = True) -> PublishFacts:
        facts = publish.facts(self.db, ctx.job.issue or 0)
        if facts is None or facts.attempt != ctx.job.attempt:
            raise Gone(f"attempt {ctx.job.attempt} of #{ctx.job.issue} is not the current one")
        if accepted and facts.state != ACCEPT:
            raise Gone(f"#{facts.issue} is no longer accepted")
        return facts

    def _merge_now(
        self, ctx: StepContext, repo: Repo, facts: PublishFacts
    ) -> tuple[str, Merged | Conflict]:
        """The base tip and the branch merged into it, computed once per base and head
        in a run. The tip is fetched when the step and the run call for it
        (`fetches_base`)."""
        known = self._known.get(ctx.job)  # only a fetched base is remembered
        fetch = fetches_base(ctx.job.step, known is not None)
        if fetch:
            base_sha = refresh_base(
                repo, self.config.repo_url, self.config.base, auth=self.checkout.auth
            )
        elif known is not None:
            base_sha = known.base_sha
        else:
            base_sha = resolve(repo, f"refs/remotes/origin/{self.config.base}")
        if known is not None and (known.base_sha, known.head_sha) == (base_sha, facts.head_sha):
            return base_sha, known.merged
        head = head_here(self.db, repo, facts.issue, facts.head_sha)
        if head is None:
            raise Gone(f"#{facts.issue} has no bundle of its head {facts.head_sha}")
        when = int(ctx.job.created_at.timestamp())
        message = f"Merge {branch_name(facts.issue)}: {facts.title}\n\nCloses #{facts.issue}.\n"
        merged = merge(
            repo, base_sha, head, message, when, text_max_bytes=self.config.merge_text_max_bytes
        )
        if fetch or known is not None:
            self._known.put(ctx.job, _Known(base_sha, head, merged))
        return base_sha, merged

    def _runs_on(self, ctx: StepContext, facts: PublishFacts, merge_sha: str) -> list[CheckRow]:
        """The latest run of each check on `merge_sha`. They are the runs CHECKS saw pass
        in this run, else they are read from the store."""
        known = self._known.get(ctx.job)
        sha = known.merged.sha if known and isinstance(known.merged, Merged) else None
        if known is not None and known.runs is not None and sha == merge_sha:
            return list(known.runs)
        return publish.checks_on(self.db, facts.issue, facts.attempt, merge_sha)

    def _checked(self, ctx: StepContext, facts: PublishFacts, merge_sha: str) -> bool:
        runs = self._runs_on(ctx, facts, merge_sha)
        names = {name for name, _ in self.config.checks}
        passed = {run.name for run in runs if run.result == CheckResult.PASS}
        return names <= passed

    def _red(self, ctx: StepContext, facts: PublishFacts, note: str) -> Result:
        """Send the work back with `note` (or escalate it at the ceiling): RED."""
        self._known.forget(ctx.job)
        event = ci_red_event(facts.sendbacks)
        review_state = REVIEW_STATE_OF[next_state(ACCEPT, event)]
        moved = publish.ci_red(self.db, facts, event, review_state, note)
        if moved.illegal:
            self.metrics.illegal_transitions.inc()
        ctx.say(f"{review_state.value}: {note.splitlines()[0]}")
        log.info("%s: %s", review_state.value, note.splitlines()[0], extra={"issue": facts.issue})
        return Result.RED


def _conflict_note(base_sha: str, conflict: Conflict) -> str:
    note = f"the branch does not merge into the base at {base_sha[:12]}: conflicts in " + ", ".join(
        conflict.paths
    )
    return "\n".join([note, *conflict.reasons])


def _guarded(step: Callable[[StepContext], Result]) -> Handler:
    def run(ctx: StepContext) -> Result:
        try:
            return step(ctx)
        except Gone as gone:
            ctx.say(str(gone))
            return Result.GONE

    return run
