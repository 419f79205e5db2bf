"""The reviewer (RULES 8, DESIGN 10). It judges finished work on its own clock, in the
Queen's process.

A pass runs every REVIEWER_TICK_SECONDS, and at once when woken. It reads the rows that
wait for review (`reviews.due`): ENDED or WAIT, with their pause passed. It works out
how many reviews may run (`review_concurrency`) and which rows go next
(`rows_to_review`). A row already in review never goes again; rows never visited go
first. Each review runs on a thread of its own, beside the actor.

A review imports the attempt's bundle into the Queen's clone when its head is not there
yet. It brings a kept tree to the head's files (`hive.git.kept`). The tree is written by
the change from the tree it held, and verified against what the last reviewer left. The
reviewer runs there (`ReviewTurn`, bounded at REVIEW_ROW_SECONDS). Its HIVE-CRITERION
lines become the verdict (`hive.rules.criteria.decide`). The verdict is written only
from a state its event may leave. A row with no commit beyond base is EMPTY without a
review. Some heads are sent back with the reason and never retried: a head that carries
a path its boundary refuses, or whose tree cannot be written out (a `..` or `.git`
entry). The second such send-back escalates.

A review is work of kind WK_REVIEW. The drain stops it, nothing is written, and the row
is reviewed again later. A review that gives no verdict is a failure
(`hive.rules.review_failures`). That happens when its reviewer did not start, crashed,
passed its bound, left a criterion unjudged or had its key refused, or when the review
broke before it ran. The row answers `wait` and is revisited after a pause that doubles.
The HIVE_REVIEW_FAILURES_MAXth failure in a row escalates it to a person, with the
sentence that `hive why`, the board and GitHub show. Each failure is counted in
hive_review_failures_total{reason}.

A reviewer other than the demo is a model (`claude`, `codex`). It also reads the earlier
send-backs, the checks' results and the diff against base. It runs on its attempt's key
(`inputs`). Its usage and cost go on a row of hive.turn_spend. A refusal rests the key
as a bee's would. While the key rests, the review waits for it; that is said, and is no
failure.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from dulwich.repo import Repo
from psycopg_pool import ConnectionPool

from hive.actors.loop import LoopActor
from hive.actors.messages import REVIEWER, REVIEWER_WAKES
from hive.actors.reviewer.config import ReviewerConfig as ReviewerConfig
from hive.actors.reviewer.inputs import context_of, how_it_ended, key_for, settle
from hive.agents.base import TurnStartError
from hive.agents.guard import BYTES_PER_MB, free_memory_bytes
from hive.agents.review import Context, Review, ReviewTurn, review_brief
from hive.git.changes import changed_paths
from hive.git.cutback import refused_paths
from hive.git.kept import KeptTrees
from hive.git.repo import Checkout, GitError, own_repo
from hive.git.scratch import ScratchTree
from hive.jobs.heads import head_here
from hive.metrics import HiveMetrics
from hive.rules.carried import refused_sentence, refused_tree_decision
from hive.rules.criteria import Decision, decide, empty_decision, judgement_of
from hive.rules.drain import WK_REVIEW
from hive.rules.keys import KeySlot
from hive.rules.lifecycle import REVIEW_STATE_OF
from hive.rules.modes import AgentKind
from hive.rules.review_failures import (
    ERROR,
    START,
    after_failure,
    failure_reason,
)
from hive.rules.reviewer import (
    ReviewRow as RuleRow,
)
from hive.rules.reviewer import (
    review_concurrency,
    rows_to_review,
)
from hive.rules.states import ESCALATE, VERDICT_ESCALATE, VERDICT_WAIT, WAIT
from hive.store import leases, reviews
from hive.store.reviews import ReviewRow, Verdict
from supervisors import Registry

log = logging.getLogger("hive.reviewer")

SCRATCH_DIRNAME = "reviews"


@dataclass(frozen=True)
class PassResult:
    """One pass: the issues whose review started."""

    started: tuple[int, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.started)

    def __str__(self) -> str:
        return "reviewing " + ", ".join(f"#{n}" for n in self.started)


@dataclass
class ReviewItem:
    """A review as the drain sees it (kind WK_REVIEW): `stop()` stops its turn."""

    issue: int
    kind: int = WK_REVIEW
    turn: ReviewTurn | None = None
    stopped: threading.Event = field(default_factory=threading.Event)
    done: threading.Event = field(default_factory=threading.Event)

    @property
    def id(self) -> str:
        return f"review-{self.issue}"

    @property
    def ended(self) -> bool:
        return self.done.is_set()

    def stop(self) -> None:
        self.stopped.set()
        if self.turn is not None:
            self.turn.stop("the process is draining")


class Reviewer:
    """The reviewer's passes (`run_once`) and its reviews, each on a thread of its own."""

    def __init__(
        self,
        db: ConnectionPool[Any],
        checkout: Checkout,
        metrics: HiveMetrics,
        register: Callable[[Any], Callable[[], None]],
        config: ReviewerConfig | None = None,
        free_memory_mb: Callable[[], int | None] = lambda: None,
        on_verdict: Callable[[ReviewRow, Decision], None] = lambda row, decision: None,
    ) -> None:
        self.db = db
        self.checkout = checkout
        self.metrics = metrics
        self.register = register
        self.config = config or ReviewerConfig()
        self.free_memory_mb = free_memory_mb
        self.on_verdict = on_verdict
        self._lock = threading.Lock()
        self._running: dict[int, ReviewItem] = {}
        self._closed = False
        # the heads' trees, kept between reviews and brought to each head by its changes
        self._trees = KeptTrees(checkout.workdir / SCRATCH_DIRNAME)

    def run_once(self) -> PassResult:
        """Start the reviews that are due, as many as may run, and return at once. A
        standby Queen reviews nothing; another process holds the Queen lease."""
        if self.config.holder is not None and not holds_queen_lease(self.db, self.config.holder):
            return PassResult()
        rows = reviews.due(self.db)
        with self._lock:
            in_review = frozenset(self._running)
        waiting = [r for r in rows if r.issue not in in_review]
        cfg = self.config
        room = review_concurrency(
            len(waiting) + len(in_review),
            cfg.key_lanes,
            self.free_memory_mb(),
            cfg.review_memory_mb,
        ) - len(in_review)
        ranked = [RuleRow(r.issue, r.last_visit_at) for r in rows]
        picks = rows_to_review(ranked, in_review, room)
        by_issue = {r.issue: r for r in rows}
        started = []
        for issue in picks:
            if self._start(by_issue[issue]):
                started.append(issue)
        return PassResult(tuple(started))

    def in_review(self) -> frozenset[int]:
        with self._lock:
            return frozenset(self._running)

    def close(self) -> None:
        """Stop every review in hand (safe twice): their rows are reviewed again later."""
        with self._lock:
            self._closed = True
            items = list(self._running.values())
        for item in items:
            item.stop()

    def _start(self, row: ReviewRow) -> bool:
        item = ReviewItem(row.issue)
        with self._lock:
            if self._closed or row.issue in self._running:
                return False
            self._running[row.issue] = item
        unregister = self.register(item)

        def run() -> None:
            try:
                self.review(row, item)
            except Exception:
                log.exception("review failed", extra={"issue": row.issue})
            finally:
                with self._lock:
                    self._running.pop(row.issue, None)
                item.done.set()
                unregister()

        threading.Thread(target=run, name=f"hive-review-{row.issue}", daemon=True).start()
        return True

    def review(self, row: ReviewRow, item: ReviewItem | None = None) -> Decision | None:
        """Review one row to its verdict. The verdict is written, counted and handed to
        `on_verdict`. Returns None when the review was stopped; then nothing is written.
        A review that gives no verdict is a failure (see the module's docstring)."""
        item = item or ReviewItem(row.issue)
        held: list[ScratchTree] = []
        try:
            return self._review(row, item, held)
        finally:
            for tree in held:
                self._trees.give_back(tree)

    def _review(self, row: ReviewRow, item: ReviewItem, held: list[ScratchTree]) -> Decision | None:
        """`review`, the head's tree taken into `held` (given back by the caller)."""
        try:
            with own_repo(self.checkout) as repo:  # a review runs beside other git work
                head = head_here(self.db, repo, row.issue, row.head_sha)
                base = row.base_sha
                files = changed_paths(repo, base, head) if head and base else ()
                if head is None or base is None or not files:
                    return self._decided(row, empty_decision())
                refused = self._refused(repo, row, base, head, held)
                if refused is not None:  # the same tree would be refused again: no retry
                    return self._decided(row, refused_tree_decision(refused, row.sendbacks))
                context = None
                if self.config.agent != AgentKind.DEMO:
                    context = context_of(self.db, repo, row, head, len(files))
        except Exception as exc:
            log.exception("the review could not run", extra={"issue": row.issue})
            return self._failed(row, ERROR, str(exc) or type(exc).__name__)
        key = key_for(self.db, row, self.config.keys)
        if key.rest_seconds > 0:
            note = f"its key rests for {key.rest_seconds} s: the review waits for it"
            wait = Decision(WAIT, VERDICT_WAIT, note)
            return self._decided(row, wait, key.rest_seconds, row.review_failures)
        try:
            done = self._run_turn(row, held[0].path, item, context, key.slot)
        except TurnStartError as exc:
            return self._failed(row, START, str(exc))
        if done is None:
            return None
        cfg = self.config
        settle(self.db, row, done.ending, self.metrics, cfg.accounting, cfg.quota_rest_seconds)
        judgement = judgement_of(done.lines, len(row.criteria))
        ending = done.ending
        reason = failure_reason(
            ending.outcome,
            bound=ending.at_bound,
            refused=ending.refusal is not None,
            judged=judgement.judged,
            criteria=judgement.criteria,
            exit_code=ending.exit_code,
        )
        if reason is not None:
            return self._failed(
                row, reason, how_it_ended(done, judgement.judged, judgement.criteria)
            )
        decision = decide(judgement, tuple(row.criteria), len(files), row.sendbacks)
        return self._decided(row, decision)

    def _refused(
        self, repo: Repo, row: ReviewRow, base: str, head: str, held: list[ScratchTree]
    ) -> str | None:
        """Why the head may not be reviewed, or None. A head may not be reviewed when it
        carries a path its boundary refuses, or when its tree cannot be written out. On
        None, a kept tree of the head is added to `held`. A bee cuts its branch back to
        the boundary before the bundle, but this check holds for any bundle."""
        refused = refused_paths(repo, base, head, row.owned_paths)
        if refused:
            return "the branch carries what its boundary refuses: " + refused_sentence(refused)
        try:
            held.append(self._trees.take(repo, head))
        except GitError as err:
            return f"the branch's tree cannot be written out: {err}"
        return None

    def _run_turn(
        self,
        row: ReviewRow,
        scratch: Path,
        item: ReviewItem,
        context: Context | None = None,
        key: KeySlot | None = None,
    ) -> Review | None:
        cfg = self.config
        brief = review_brief(row.issue, row.title, row.body, row.owned_paths, row.criteria, context)
        turn = ReviewTurn(
            cfg.agent,
            issue=row.issue,
            title=row.title,
            brief=brief,
            boundary=row.owned_paths,
            worktree=scratch,
            bound_seconds=cfg.bound_seconds,
            key=key.value if key else "",
            key_env=cfg.key_env,
            launch=cfg.launch,
        )
        item.turn = turn
        if item.stopped.is_set():
            return None
        turn.start()
        if item.stopped.is_set():
            turn.stop("the process is draining")
        done = turn.wait()
        return None if item.stopped.is_set() else done

    def _failed(self, row: ReviewRow, reason: str, detail: str) -> Decision:
        """Handle a review that gave no verdict. It is counted, then tried again after a
        pause that doubles. At the maximum it is escalated (`after_failure`)."""
        cfg = self.config
        self.metrics.review_failures.labels(reason=reason).inc()
        step = after_failure(
            reason,
            detail,
            row.review_failures,
            row.review_pause_seconds,
            cfg.failures_max,
            cfg.failure_pause_seconds,
        )
        log.warning("review failed (%s): %s", reason, step.note, extra={"issue": row.issue})
        if step.escalate:
            decision = Decision(ESCALATE, VERDICT_ESCALATE, step.note)
        else:
            decision = Decision(WAIT, VERDICT_WAIT, step.note)
        return self._decided(row, decision, step.pause_seconds, step.failures)

    def _decided(
        self, row: ReviewRow, decision: Decision, pause: int = 0, failures: int = 0
    ) -> Decision:
        review_state = REVIEW_STATE_OF[decision.verdict]
        verdict = Verdict(decision.event, review_state, decision.note, pause, failures)
        moved = reviews.write_verdict(self.db, row.issue, row.conversation_id, verdict)
        if moved.illegal:
            self.metrics.illegal_transitions.inc()
        if moved.landed:
            self.metrics.reviews.labels(verdict=review_state.value).inc()
            log.info(
                "verdict %s: %s", review_state.value, decision.note, extra={"issue": row.issue}
            )
            self.on_verdict(row, decision)
        return decision


class ReviewerActor(LoopActor):
    """The reviewer's actor, registered as REVIEWER. It runs a pass every
    `tick_seconds`. It also runs one at once when an order ends in this process (told
    `OrderEnded`), or anywhere in elsewhere mode (NOTIFY). Each review is work of kind
    WK_REVIEW, which the drain stops. `on_stop` stops the reviews in hand; their rows are
    reviewed again later."""

    def __init__(
        self,
        db: ConnectionPool[Any],
        checkout: Checkout,
        metrics: HiveMetrics,
        names: Registry,
        add_work: Callable[[Any], Callable[[], None]],
        config: ReviewerConfig,
        on_verdict: Callable[[ReviewRow, Decision], None],
        listen_url: str | None,
    ) -> None:
        reviewer = Reviewer(
            db,
            checkout,
            metrics,
            add_work,
            config,
            free_memory_mb=_free_memory_mb,
            on_verdict=on_verdict,
        )
        super().__init__(
            "reviewer",
            reviewer,
            config.tick_seconds,
            registry=names,
            known_as=REVIEWER,
            wakes_on=REVIEWER_WAKES,
            listen_url=listen_url,
        )


def holds_queen_lease(db: Any, holder: str) -> bool:
    lease = leases.get(db, leases.QUEEN_LEASE)
    return lease is not None and lease.holder == holder and lease.expires_at > datetime.now(UTC)


def _free_memory_mb() -> int | None:
    free = free_memory_bytes()
    return None if free is None else free // BYTES_PER_MB
