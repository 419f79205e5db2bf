"""The publish job's steps where the forge is GitHub (HIVE_PUBLISH=github).

The job and its table are the local forge's (`hive.rules.jobs`: CHECKS -> GATE -> MERGE
-> PUSH -> CLOSE); `hive.jobs.publish.Publisher` runs GATE and CLOSE for both and hands
these steps here:

- CHECKS: push the accepted head as `queen-<n>` (a branch there already is not sent
  again), open the
  pull request (or update the open one), then read the head's check runs and commit
  statuses. Still running: the job parks on `github:<n>` (a webhook wakes it) with a
  wake time as the fallback. None yet: it waits CHECKS_APPEAR_SECONDS for CI to report
  before it lets the gate wait for a person. Red: the base's checks are read too; a
  check red on both is inherited (an issue is opened about it, the gate waits for a
  person), any other red sends the work back with the check's name and summary. An
  issue opened about a check red on the base is closed once the base's checks show it
  passing.
- MERGE: the pull request as GitHub sees it now, in one of ten cases
  (`hive.rules.forge_stuck.Stuck`): mergeable goes on; a conflict or a branch behind its base
  sends the work back; mergeability being worked out, a required review, branch
  protection or a draft parks with the Queen's next move as the job's sentence; a head
  that moved, a deleted head branch or a closed pull request goes back to CHECKS (which
  pushes the accepted head and opens a new one); merged by a person is taken as merged.
- PUSH: merge through the API with the method configured, compare-and-swap on the head
  sha (GitHub's `sha`), journaled as `push:<merge sha>` once it landed.
- after CLOSE: the merge is commented on the issue and the issue closed; an issue
  opened about a check red on the base is closed when the merged work passed it.

A park is bounded (`hive.rules.pull_waits`): once the job has waited
`HIVE_GITHUB_PARK_MINUTES` on one accepted head (a required check that never reports,
a review nobody gives), the work is escalated to a person with a sentence. A pull
request a person merged at another head than the accepted one is not taken as the
work's merge: it is escalated, and the issue is not closed.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hive.forge.github.api import MergeRefused, PullRequest, Repository
from hive.forge.github.hooks import WAKE_KEY
from hive.forge.github.push import push_branch
from hive.forge.github.watch import Watch, subject
from hive.git.auth import GitAuth
from hive.git.merge import Conflict, merge
from hive.git.repo import Checkout, GitError, own_repo, refresh_base
from hive.jobs.engine import StepContext
from hive.jobs.forge_steps import Gone, Red
from hive.jobs.heads import head_here
from hive.rules.branches import branch_name
from hive.rules.forge_checks import CheckFact, CheckState, Gate, gate_case, inherited_tail
from hive.rules.forge_stuck import (
    PUSHES_AGAIN,
    SENDS_BACK,
    PullFacts,
    Stuck,
    stuck_of_pull,
    stuck_of_refusal,
    stuck_sentence,
)
from hive.rules.jobs import Result
from hive.rules.lifecycle import REVIEW_STATE_OF
from hive.rules.modes import CheckResult
from hive.rules.pull_waits import (
    PARK_MINUTES_DEFAULT,
    foreign_merge_sentence,
    merge_is_ours,
    park_move,
)
from hive.rules.states import CI_RED_AT_CEILING, ESCALATE
from hive.store import forge, publish
from hive.store.publish import PublishFacts

log = logging.getLogger("hive.publish")

CHECKS_APPEAR_SECONDS = 600  # CI has this long after the push to report a first check
COMPUTING_RECHECK_SECONDS = 2  # GitHub works mergeability out in a moment
PR_NOTE = "pr"


@dataclass(frozen=True)
class GitHubPublishConfig:
    token: str
    base: str
    merge_method: str = "merge"
    recheck_seconds: int = 60  # the fallback look at a parked pull request
    checks_appear_seconds: int = CHECKS_APPEAR_SECONDS
    park_seconds: float = PARK_MINUTES_DEFAULT * 60  # a park's bound on one head

    def __repr__(self) -> str:
        return f"GitHubPublishConfig(base={self.base!r}, merge_method={self.merge_method!r})"


class GitHubSteps:
    def __init__(
        self,
        db: Any,
        checkout: Checkout,
        repo: Repository,
        watch: Watch,
        config: GitHubPublishConfig,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.db = db
        self.checkout = checkout
        self.repo = repo
        self.watch = watch
        self.config = config
        self.clock = clock
        self.auth = GitAuth(repo.client.api_url, config.token)
        self._clone_url: str | None = None

    # ---- CHECKS -------------------------------------------------------------------

    def checks(self, ctx: StepContext, facts: PublishFacts, red: Red) -> Result:
        head = self._push_head(ctx, facts)
        number = self._pull_request(facts, head)
        ctx.renew()
        facts_now = self.repo.checks(head)
        base_red: list[str] = []
        if any(c.state == CheckState.FAIL for c in facts_now):
            on_base = self.repo.checks(self.config.base)
            base_red = [c.name for c in on_base if c.state == CheckState.FAIL]
            for name, closed in self.watch.base_green(on_base, self.config.base, number):
                ctx.say(f"check {name} is green on {self.config.base} again (#{closed} closed)")
        case = gate_case(facts_now, base_red)
        if case.gate == Gate.PENDING:
            running = ", ".join(c.name for c in facts_now if c.state == CheckState.PENDING)
            why = f"waits for checks on pull request #{number}: {running}"
            return self._park(ctx, facts, number, why)
        if case.gate == Gate.NONE:
            first = ctx.effect(f"first-look:{head}", lambda: {"at": self.clock()})
            if self.clock() - float(first["at"]) < self.config.checks_appear_seconds:
                why = f"waits for CI to report on pull request #{number}"
                return self._park(ctx, facts, number, why)
            ctx.say(f"pull request #{number}: no checks reported")
            return Result.NO_CHECKS
        for check in facts_now:
            inherited = case.gate == Gate.INHERITED and check.state == CheckState.FAIL
            tail = check.summary
            if inherited:
                tail = inherited_tail(self.config.base, tail)
            publish.record_check(
                self.db,
                issue=facts.issue,
                attempt=facts.attempt,
                job=ctx.job.id,
                merge_sha=head,
                name=check.name,
                result=CheckResult.PASS if check.state == CheckState.PASS else CheckResult.FAIL,
                exit_code=None,
                seconds=0.0,
                output_tail=tail,
                inherited=inherited,
            )
        if case.gate == Gate.RED:
            first = case.red[0]
            note = f"check {first.name} failed on pull request #{number} ({head[:12]}):\n"
            return red(ctx, facts, note + first.summary)
        if case.gate == Gate.INHERITED:
            for check in case.red:
                opened = self.watch.base_red(check, self.config.base, number)
                ctx.say(f"check {check.name} is red on {self.config.base} too (#{opened})")
            return Result.PASSED
        ctx.say(f"{len(facts_now)} checks passed on pull request #{number}")
        return Result.PASSED

    def gate_sha(self, facts: PublishFacts) -> str | None:
        """The commit the gate reads checks of: the pull request's head."""
        return facts.head_sha

    def gate_waits_because(self, facts: PublishFacts) -> str:
        runs = publish.checks_on(self.db, facts.issue, facts.attempt, facts.head_sha or "")
        inherited = [r.name for r in runs if r.inherited]
        if inherited:
            return (
                f"check {', '.join(inherited)} is red on {self.config.base} too, not by this "
                "work; a person decides whether it merges anyway"
            )
        if not runs:
            return "no checks ran on its pull request"
        return "its checks have not all passed"

    # ---- MERGE and PUSH -----------------------------------------------------------

    def merge(self, ctx: StepContext, facts: PublishFacts, red: Red) -> Result:
        pr = self.repo.pull(self._pr_number(facts))
        head = pr.head_sha
        if pr.state != "open" and not pr.merged and self.repo.branch_sha(pr.head_ref) is None:
            head = ""  # GitHub keeps a closed pull request's head sha after its branch goes
        seen = PullFacts(pr.state, pr.merged, head, pr.mergeable, pr.mergeable_state)
        stuck = stuck_of_pull(seen, facts.head_sha or "")
        if stuck == Stuck.MERGED and not merge_is_ours(pr.head_sha, facts.head_sha or ""):
            return self._foreign_merge(ctx, facts, pr)
        return self._stuck(ctx, facts, pr, stuck, red)

    def push(self, ctx: StepContext, facts: PublishFacts, red: Red) -> Result:
        number = self._pr_number(facts)
        title = f"Merge {branch_name(facts.issue)}: {facts.title}"
        out = self.repo.merge(number, facts.head_sha or "", self.config.merge_method, title)
        if isinstance(out, MergeRefused):
            # refused: merged already (a job stopped before it recorded the merge), or stuck
            pr = self.repo.pull(number)
            if not (pr.merged and pr.merge_commit_sha):
                stuck = stuck_of_refusal(out.status, out.message)
                return self._stuck(ctx, facts, pr, stuck, red, at_push=True)
            if not merge_is_ours(pr.head_sha, facts.head_sha or ""):
                return self._foreign_merge(ctx, facts, pr)
            out = pr.merge_commit_sha
        merged_sha = out
        ctx.effect(f"push:{merged_sha}", lambda: {"pushed": merged_sha})
        ctx.say(f"pull request #{number} merged as {merged_sha[:12]}")
        return Result.PUSHED

    def after_close(self, ctx: StepContext, facts: PublishFacts, sha: str) -> None:
        pr = self._pr_number(facts)

        def close() -> dict[str, int]:
            self.watch.merged(facts.issue, sha, pr)
            return {"closed": facts.issue}

        ctx.effect(f"github-close:{facts.issue}:{facts.attempt}", close)
        # the checks the gate opened on: each that passed is green on the base it merged into
        runs = publish.checks_on(self.db, facts.issue, facts.attempt, facts.head_sha or "")
        passed = [
            CheckFact(r.name, CheckState.PASS if r.result == CheckResult.PASS else CheckState.FAIL)
            for r in runs
        ]
        for name, closed in self.watch.base_green(passed, self.config.base, pr, merged_as=sha):
            ctx.say(f"check {name} passed in the merge: #{closed} about its red base closed")

    # ---- helpers ------------------------------------------------------------------

    def _stuck(
        self,
        ctx: StepContext,
        facts: PublishFacts,
        pr: PullRequest,
        stuck: Stuck,
        red: Red,
        *,
        at_push: bool = False,
    ) -> Result:
        """The Queen's move for a pull request in case `stuck` (rules.forge_stuck.NEXT_MOVE)."""
        if stuck == Stuck.NONE:
            ctx.say(f"pull request #{pr.number} can merge")
            return Result.MERGED
        sentence = stuck_sentence(pr.number, stuck)
        log.info("%s", sentence, extra={"issue": facts.issue})
        if stuck == Stuck.MERGED:
            ctx.say(sentence)
            return Result.MERGED  # PUSH is refused, reads the merge and records its sha
        if stuck in PUSHES_AGAIN:
            # CHECKS pushes the accepted head again and opens or updates the pull request
            forge.put_note(self.db, subject(facts.issue), PR_NOTE, pr.number, "")
            ctx.say(sentence)
            return Result.MOVED
        if stuck in SENDS_BACK:
            if at_push:
                ctx.say(sentence)
                return Result.MOVED  # MERGE reads the case and sends the work back
            why = "conflicts with" if stuck == Stuck.CONFLICT else "is behind"
            note = f"pull request #{pr.number} {why} {self.config.base}: {sentence}"
            where = self._conflict(facts) if stuck == Stuck.CONFLICT else None
            red(ctx, facts, note if where is None else f"{note}\n{where}")
            return Result.CONFLICT
        wake = (
            COMPUTING_RECHECK_SECONDS if stuck == Stuck.COMPUTING else self.config.recheck_seconds
        )
        return self._park(ctx, facts, pr.number, sentence, wake)

    def _park(
        self,
        ctx: StepContext,
        facts: PublishFacts,
        pr: int,
        detail: str,
        recheck_seconds: int | None = None,
    ) -> Result:
        """Park on the pull request's wake key, or escalate once the job has waited its
        bound on this head (counted from its first park on it)."""
        since = ctx.effect(f"parked-since:{facts.head_sha}", lambda: {"at": self.clock()})
        move = park_move(
            self.clock() - float(since["at"]),
            self.config.park_seconds,
            recheck_seconds or self.config.recheck_seconds,
            pr,
            detail,
        )
        if move.escalate:
            return self._escalate(ctx, facts, move.sentence)
        return ctx.park(
            key=WAKE_KEY.format(issue=facts.issue),
            wake_in_seconds=move.wake_in_seconds,
            detail=detail,
        )

    def _conflict(self, facts: PublishFacts) -> str | None:
        """Where the accepted head conflicts with the base as the Queen's clone merges it
        (the base's commit and the paths, as the local forge's send-back says them, so
        the bee can merge that base in), or None when it merges here or cannot be read."""
        try:
            with own_repo(self.checkout) as repo:
                base_sha = refresh_base(repo, self._clone(), self.config.base, auth=self.auth)
                head = head_here(self.db, repo, facts.issue, facts.head_sha)
                if head is None:
                    return None
                out = merge(repo, base_sha, head, "conflict?\n", 0)
        except (GitError, OSError) as err:
            log.warning("the conflict's paths: %s", err, extra={"issue": facts.issue})
            return None
        if not isinstance(out, Conflict):
            return None
        paths = ", ".join(out.paths)
        return f"the branch does not merge into the base at {base_sha[:12]}: conflicts in {paths}"

    def _foreign_merge(self, ctx: StepContext, facts: PublishFacts, pr: PullRequest) -> Result:
        sentence = foreign_merge_sentence(
            pr.number, pr.merge_commit_sha or "", pr.head_sha, facts.head_sha or ""
        )
        return self._escalate(ctx, facts, sentence)

    def _escalate(self, ctx: StepContext, facts: PublishFacts, note: str) -> Result:
        """Escalate the accepted work to a person with `note`: ESCALATED."""
        publish.ci_red(self.db, facts, CI_RED_AT_CEILING, REVIEW_STATE_OF[ESCALATE], note)
        ctx.say(f"escalate: {note}")
        log.warning("escalate: %s", note, extra={"issue": facts.issue})
        return Result.ESCALATED

    def _clone(self) -> str:
        if self._clone_url is None:
            self._clone_url = str(self.repo.info()["clone_url"])
        return self._clone_url

    def _push_head(self, ctx: StepContext, facts: PublishFacts) -> str:
        with own_repo(self.checkout) as repo:
            head = head_here(self.db, repo, facts.issue, facts.head_sha)
            if head is None:
                raise Gone(f"#{facts.issue} has no bundle of its head {facts.head_sha}")
            branch = branch_name(facts.issue)
            url = self._clone()
            # no journal: the push is idempotent (a branch at the head already is read,
            # not written), and a branch someone moved is put back by the next CHECKS
            push_branch(repo, url, self.auth, branch, head)
        return head

    def _pull_request(self, facts: PublishFacts, head: str) -> int:
        """The number of the open pull request of the accepted head: opened, or updated
        once per head (a look again at a parked job sends nothing)."""
        known = forge.note(self.db, subject(facts.issue), PR_NOTE)
        if known is not None and known.body == head:
            return known.remote_id
        branch = branch_name(facts.issue)
        title = f"{facts.title} (#{facts.issue})"
        body = (
            f"Closes #{facts.issue}.\n\nThe hive's work on #{facts.issue}, attempt "
            f"{facts.attempt}, accepted by its reviewer (head {head[:12]})."
        )
        pr = self.repo.open_pull(branch)
        if pr is None:
            # a pull request opened before whose answer was lost may have been merged by
            # a person meanwhile: that one is the work's, not a new one (MERGE takes it,
            # or escalates it when the person added commits before merging)
            pr = self.repo.merged_pull(branch, head)
        if pr is None:
            pr = self.repo.create_pull(title, branch, self.config.base, body)
            log.info("opened pull request #%d", pr.number, extra={"issue": facts.issue})
        else:
            pr = self.repo.update_pull(pr.number, title, body)
        forge.put_note(self.db, subject(facts.issue), PR_NOTE, pr.number, head)
        return pr.number

    def _pr_number(self, facts: PublishFacts) -> int:
        known = forge.note(self.db, subject(facts.issue), PR_NOTE)
        if known is None:
            raise RuntimeError(f"#{facts.issue} has no pull request yet it is past CHECKS")
        return known.remote_id
