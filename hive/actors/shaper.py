"""The shaper (DESIGN 11). It proposes a shape for an open issue that fails the shape
gate. An issue fails the gate when it has no boundary, a boundary of files that do not
exist, or no criteria. The shaper runs in the Queen's process while she holds her lease.

A pass takes one issue the shaper has not answered for its present problem. An issue
edited since is shaped again. The pass runs a short turn of HIVE_SHAPER_AGENT in a
scratch tree of the base, with the shaping brief. The agent is `demo`
(hive/agents/demo_shape.py), or `claude`, `codex`, `command:` or `python:` as for the
reviewer. Its HIVE-SHAPE- lines are the proposal (`hive.rules.shaping`), held to the
shape rule.

- A refused proposal says why.
- With HIVE_SHAPE=ask the proposal waits for the issue's author. It shows in `hive
  issue show N` and in a GitHub comment. `hive issue accept-shape N` or the label
  `hive:shape-ok` applies it.
- With `apply` it is applied at once, with a sentence.

A turn that gives no proposal is a failure, counted as the reviewer's are
(hive/rules/review_failures.py). It is tried again after a pause that doubles. The
HIVE_REVIEW_FAILURES_MAXth failure in a row leaves the issue to a person, with a
sentence. Every source's issues (local, the API, GitHub) are in the store, so one gate
shapes them all.
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from hive.actors.loop import LoopActor
from hive.actors.reviewer.config import ReviewerConfig
from hive.agents.base import Ending, TurnStartError
from hive.agents.review import ReviewTurn, demo_command
from hive.git.facts import BaseFacts, base_facts
from hive.git.repo import Checkout, own_repo, resolve
from hive.git.scratch import scratch_tree
from hive.metrics import HiveMetrics
from hive.rules.credits import Terms
from hive.rules.review_failures import ERROR, SHAPER, START, after_failure, failure_reason
from hive.rules.shape import NEVER_TASK_LABELS, shape_problem
from hive.rules.shaping import APPLY, gate_problem, proposal_of, proposal_problem, shaper_brief
from hive.services import shaping
from hive.store import credits, shapes, spend
from hive.store import issues as issue_rows
from hive.store.db import Db, connection
from hive.store.issues import Issue
from hive.store.shapes import Shape
from supervisors import Registry

log = logging.getLogger("hive.shaper")

SCRATCH_DIRNAME = "shaping"
SHAPE_TURN_SECONDS = 300.0
DEMO_SHAPE_COMMAND = demo_command("hive.agents.demo_shape")
# the states that answered a problem: shaped again only once the issue changes
ANSWERED = (shapes.PENDING, shapes.APPLIED, shapes.REFUSED, shapes.FAILED)


@dataclass(frozen=True)
class Shaped:
    """One pass: the issue shaped (None: none) and where its shaping stands."""

    issue: int | None = None
    state: str = ""

    def __bool__(self) -> bool:
        return self.issue is not None

    def __str__(self) -> str:
        return f"shaped #{self.issue}: {self.state}"


class Shaper:
    """`run_once` shapes at most one issue; `close` stops a turn in hand."""

    def __init__(
        self,
        db: Db,
        checkout: Checkout,
        metrics: HiveMetrics,
        agent: str,
        mode: str,
        config: ReviewerConfig | None = None,
        edit_remote: shaping.EditRemote | None = None,
        holds_lease: Callable[[], bool] = lambda: True,
        credit_terms: Terms | None = None,
    ) -> None:
        self.db, self.checkout, self.metrics = db, checkout, metrics
        self.agent, self.mode = agent, mode
        self.config = config or ReviewerConfig()
        self.edit_remote = edit_remote
        self.holds_lease = holds_lease
        self.credit_terms = credit_terms  # HIVE_CREDITS=on: each turn is sold
        self._turn: ReviewTurn | None = None
        self._closed = False
        self._facts: BaseFacts | None = None  # the base's, kept while the base stays

    def close(self) -> None:
        self._closed = True
        if self._turn is not None:
            self._turn.stop("the process is stopping")

    def run_once(self) -> Shaped:
        if self._closed or not self.holds_lease():
            return Shaped()
        with own_repo(self.checkout) as repo:
            base_sha = resolve(repo, self.checkout.base)
            if self._facts is None or self._facts.sha != base_sha:
                self._facts = base_facts(repo, base_sha)  # a walk of the whole tree
        facts = self._facts
        answered = shapes.of_open_issues(self.db)
        now = datetime.now(UTC)
        for issue in issue_rows.listing(self.db, open_only=True):
            problem = gate_problem(
                shape_problem(
                    issue.labels,
                    issue.boundary,
                    issue.body,
                    facts.files,
                    facts.dirs,
                    facts.symlinks,
                ),
                len(issue.criteria),
                bool(NEVER_TASK_LABELS.intersection(issue.labels)),
            )
            if problem is None:
                continue
            known = answered.get(issue.number)
            if known is not None and known.problem == problem:
                if known.state in ANSWERED:
                    continue
                if known.retry_at is not None and known.retry_at > now:
                    continue
            state = self.shape(issue, problem, known, base_sha, facts)
            return Shaped(issue.number, state)
        return Shaped()

    def shape(
        self, issue: Issue, problem: str, known: Shape | None, base_sha: str, facts: BaseFacts
    ) -> str:
        """Run the shaper on `issue`, write its answer and return the state written."""
        scratch = self.checkout.workdir / SCRATCH_DIRNAME / str(issue.number)
        shutil.rmtree(scratch, ignore_errors=True)
        failures = known.failures if known is not None and known.problem == problem else 0
        pause = known.pause_seconds if known is not None and known.problem == problem else 0
        try:
            with own_repo(self.checkout) as repo:
                scratch_tree(repo, base_sha, scratch)
            turn = ReviewTurn(
                self.agent,
                issue=issue.number,
                title=issue.title,
                brief=shaper_brief(issue.title, issue.body, problem, facts.files),
                boundary=(),
                worktree=scratch,
                bound_seconds=min(SHAPE_TURN_SECONDS, self.config.bound_seconds),
                key=self.config.keys[0].value if self.config.keys else "",
                key_env=self.config.key_env,
                launch=self.config.launch,
                demo=DEMO_SHAPE_COMMAND,
            )
            self._turn = turn
            turn.start()
            done = turn.wait()
        except TurnStartError as exc:
            return self._failed(issue, problem, START, str(exc), failures, pause)
        except Exception as exc:
            log.exception("the shaping could not run", extra={"issue": issue.number})
            return self._failed(issue, problem, ERROR, str(exc), failures, pause)
        finally:
            self._turn = None
            shutil.rmtree(scratch, ignore_errors=True)
        self._sell(issue, done.ending)
        if self._closed:
            return "stopped"
        proposal = proposal_of(done.lines)
        ending = done.ending
        reason = failure_reason(
            ending.outcome,
            bound=ending.at_bound,
            refused=ending.refusal is not None,
            judged=1 if proposal.boundary or proposal.criteria else 0,
            criteria=1,
            exit_code=ending.exit_code,
        )
        if reason is not None:
            return self._failed(issue, problem, reason, ending.outcome, failures, pause)
        refused = proposal_problem(
            proposal, issue.labels, issue.body, facts.files, facts.dirs, facts.symlinks
        )
        said = shaping.describe(proposal)
        if refused is not None:
            note = f"the shaper's proposal was refused: {refused} (it proposed {said})"
            return self._put(
                Shape(
                    issue.number,
                    shapes.REFUSED,
                    proposal.boundary,
                    proposal.criteria,
                    problem,
                    note,
                )
            )
        if self.mode == APPLY:
            shaping.apply(self.db, issue, proposal, self.edit_remote)
            note = f"shaped by the hive ({problem}): {said}"
            return self._put(
                Shape(
                    issue.number,
                    shapes.APPLIED,
                    proposal.boundary,
                    proposal.criteria,
                    problem,
                    note,
                )
            )
        note = (
            f"the shaper proposes {said}: accept with `hive issue accept-shape "
            f"{issue.number}` or the label `hive:shape-ok`"
        )
        return self._put(
            Shape(issue.number, shapes.PENDING, proposal.boundary, proposal.criteria, problem, note)
        )

    def _sell(self, issue: Issue, ending: Ending) -> None:
        """Record what the shaping turn spent, and sell the turn to the issue's account
        when credits are on. The day's spend counts it at once. Both writes share one
        transaction, so a crash cannot leave the spend recorded and the turn unsold."""
        usage = ending.usage
        cost = self.config.accounting.cost(usage)
        usd = cost.usd if cost else None
        key_index = self.config.keys[0].index if self.config.keys else None  # its key
        with connection(self.db) as conn, conn.transaction():
            # a turn that reported no usage is a row too: it counts, as unpriced
            spend.add(
                conn, spend.turn_spend(spend.SHAPING, issue.number, None, key_index, usage, cost)
            )
            if self.credit_terms is not None:
                turn = credits.shaping_turn(issue.number)
                credits.sell_issue_turn(conn, self.credit_terms, issue, turn, usd)
        if cost is not None:
            self.metrics.spend(key_index, cost.usd)

    def _failed(
        self, issue: Issue, problem: str, reason: str, detail: str, failures: int, pause: int
    ) -> str:
        cfg = self.config
        self.metrics.review_failures.labels(reason=reason).inc()
        step = after_failure(
            reason, detail, failures, pause, cfg.failures_max, cfg.failure_pause_seconds, SHAPER
        )
        note = step.note
        state = shapes.FAILED if step.escalate else shapes.WAITING
        log.warning("shaping failed (%s): %s", reason, note, extra={"issue": issue.number})
        return self._put(
            Shape(issue.number, state, (), (), problem, note, step.failures, step.pause_seconds)
        )

    def _put(self, shape: Shape) -> str:
        shapes.put(self.db, shape)
        log.info("shaper: %s", shape.note, extra={"issue": shape.issue})
        return shape.state


class ShaperActor(LoopActor):
    """The shaper's actor, registered as "shaper". It runs a pass every
    `interval_seconds`, the reviewer's clock."""

    def __init__(self, names: Registry, shaper: Shaper, interval_seconds: float) -> None:
        super().__init__("shaper", shaper, interval_seconds, registry=names)
