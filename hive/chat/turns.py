"""A bee's bot's answers, by turns (DESIGN 11, agents among themselves), one claimed row
at a time (`run_once`), for the loop actor of a process that runs bees.

The chat's loop owes a bee's answer as a row with no body and goes on (it never waits
for a turn). A process that runs bees claims the row (hive.store.chat_turns), asks the
rule (hive.rules.chat_turn.step: the cap and the credit again, the issue, the tries) and
runs the turn the way its bees run: HIVE_AGENT through the adapters, sandboxed, with its
key, resuming the issue's latest conversation (claude, codex), in a scratch tree of the
issue's branch (of base when this clone has no branch) that is thrown away after. The
answer, what the turn spent and, with credits on, its sale on the issue's account are
one transaction; the outbox sends the answer.

A stop (`close`, the drain) stops the turn in hand, counts what it reported spending
and lets the row go, so another process (or this one, restarted) runs it again; a
process that died with a row is let go of at its next start, or when its claim runs out.
"""

from __future__ import annotations

import logging
import shutil
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg

from hive.agents.base import Ending, Turn, TurnContext, TurnStartError
from hive.agents.conversation import RESUMING_AGENTS
from hive.agents.launch import Launch
from hive.agents.protocol import Usage
from hive.agents.review import demo_command, start_review
from hive.agents.start import start_turn
from hive.agents.transcript import STDOUT
from hive.chat.gate import refused
from hive.git.repo import Checkout, GitError, branch_ref, own_repo, resolve
from hive.git.scratch import remove_scratch_tree, scratch_tree
from hive.metrics import HiveMetrics
from hive.rules import chat_turn as rule
from hive.rules.branches import branch_name
from hive.rules.credits import Terms, payer
from hive.rules.keys import KeySlot, refusal_outcome, sort_refusal
from hive.rules.modes import AgentKind
from hive.rules.outcome_codes import code_of
from hive.rules.rests import QUOTA_REST_SECONDS, KeyEnding, Rest, moves_rest
from hive.rules.states import REFUSED_OUTCOME
from hive.store import chat_turns, conversations, credits, issues, keyrests
from hive.store.db import Db, connection

log = logging.getLogger("hive.chat")

DEMO_CHAT_COMMAND = demo_command("hive.agents.demo_chat")
SCRATCH_DIRNAME = "chat"
STOPPING = "the process stops: another runs the turn again"
LINES_KEPT_MAX = 400  # a turn's stdout lines kept for its reply (a message is cut anyway)


@dataclass(frozen=True)
class TurnsConfig:
    """How this process runs a bee's bot's turns: its name (the claim's), its agent
    (HIVE_AGENT), the key variable and keys, how agents are launched, the turn's bound,
    the day's cap and the credit terms (None: credits off)."""

    by: str
    agent: str
    key_env: str = "HIVE_KEY"
    keys: tuple[KeySlot, ...] = ()
    launch: Launch = field(default_factory=Launch)
    turn_seconds: float = rule.TURN_SECONDS
    spend_cap_usd: float = 0.0
    credits: Terms | None = None
    quota_rest_seconds: int = QUOTA_REST_SECONDS  # HIVE_QUOTA_REST_SECONDS


@dataclass
class Answered:
    """One pass: the row answered (None: none), how, and in how long."""

    row: int | None = None
    step: str = ""
    seconds: float = 0.0

    def __bool__(self) -> bool:
        return self.row is not None

    def __str__(self) -> str:
        return f"chat: row {self.row} answered ({self.step}) in {self.seconds:.2f} s"


@dataclass
class _Running:
    held: chat_turns.Claim
    turn: Turn
    key: KeySlot | None

    @property
    def key_index(self) -> int | None:
        return None if self.key is None else self.key.index


class ChatTurns:
    """The turns of the bee's bots, for the rows this process claims."""

    def __init__(
        self,
        db: Db,
        checkout: Checkout,
        config: TurnsConfig,
        cost: Callable[[Usage | None], float | None] = lambda usage: None,
        metrics: HiveMetrics | None = None,
    ) -> None:
        self.db = db
        self.checkout = checkout
        self.config = config
        self.cost = cost  # a turn's cost in US dollars from its usage (None: unknown)
        self.metrics = metrics if metrics is not None else HiveMetrics()
        self._lock = threading.Lock()  # guards the two below
        self._running: _Running | None = None
        self._closed = False
        self._booted = False
        self.answered_last = False  # the last pass answered a row: more may wait
        self.last_turn_seconds: float | None = None  # the last turn's own time (a bench)

    def run_once(self) -> Answered:
        done = self._pass()
        self.answered_last = bool(done)
        return done

    def _pass(self) -> Answered:
        if not self._booted:
            let_go = chat_turns.let_go_mine(self.db, self.config.by)
            if let_go:
                log.info("chat: %d turns an earlier life of this process held let go", let_go)
            self._booted = True
        started = time.monotonic()
        bound = min(self.config.turn_seconds, rule.TURN_SECONDS)
        held = chat_turns.claim(self.db, self.config.by, rule.claim_seconds(bound))
        if held is None:
            return Answered()
        issue = held.issue
        why = None if issue is None else self._refused(issue)
        # the key is the issue's own unless it rests, as a Queen's round skips a resting key
        key = self._pick(held.key_index)
        known = issue is not None and held.title is not None
        step = rule.step(held.tries, why, known, key.rests_seconds)
        if step != rule.Step.RUN or issue is None:
            said = rule.sentence(step, issue, held.tries, why, key.rests_seconds)
            self._answer(self.db, held, said)
        elif not self._turn(held, issue, held.title or "", bound, self._slot(key.key_index)):
            return Answered()  # stopped: the row was let go
        self.metrics.chat_turns.labels(step=step.value).inc()
        return Answered(held.row_id, step.value, time.monotonic() - started)

    def _pick(self, own: int | None) -> rule.KeyPick:
        """The key a turn on an issue whose order ran on key `own` takes (see the rule)."""
        keys = self.config.keys
        rests = keyrests.resting_seconds(self.db, keys) if keys else {}
        return rule.pick_key(tuple(slot.index for slot in keys), own, rests)

    def _slot(self, key_index: int | None) -> KeySlot | None:
        return next((slot for slot in self.config.keys if slot.index == key_index), None)

    def _refused(self, issue: int) -> str | None:
        return refused(self.db, issue, self.config.spend_cap_usd, self.config.credits)

    def _answer(self, db: Db, held: chat_turns.Claim, body: str) -> None:
        if not chat_turns.answer(db, held, self.config.by, body):
            log.warning(
                "chat: row %d was claimed again meanwhile: its answer is that claim's", held.row_id
            )

    def close(self) -> None:
        """Stop the turn in hand, count what it spent, let its row go (safe twice)."""
        with self._lock:
            self._closed = True
            running, self._running = self._running, None
        if running is None:
            return
        running.turn.stop(STOPPING)
        self._spend(running, running.turn.ending, answer=None)
        chat_turns.let_go(self.db, running.held, self.config.by)
        log.info("chat: the turn of row %d stopped and let go", running.held.row_id)

    def _turn(
        self, held: chat_turns.Claim, issue: int, title: str, bound: float, slot: KeySlot | None
    ) -> bool:
        """Run the turn on key `slot` and answer; False when `close` took it over (it let
        the row go)."""
        lines: list[str] = []

        def on_line(kind: str, text: str) -> None:
            if kind == STDOUT and len(lines) < LINES_KEPT_MAX:
                lines.append(text)

        resume = None
        if self.config.agent in RESUMING_AGENTS:
            resume = conversations.get(self.db, issue)
        scratch = self.checkout.workdir / SCRATCH_DIRNAME / f"{held.row_id}-{held.tries}"
        try:
            self._scratch(issue, scratch)
            ctx = TurnContext(
                issue=issue,
                title=title,
                body="",
                branch=branch_name(issue),
                boundary=(),
                brief=rule.brief(issue, title, held.asked),
                worktree=scratch,
                key_env=self.config.key_env,
                key=slot.value if slot is not None else "",
                turn_max_seconds=bound,
                bound_name="the chat turn's bound",
                on_line=on_line,
                launch=self.config.launch,
                resume=resume,
            )
            with self._lock:
                if self._closed:
                    return False
                turn = self._start(ctx)
                running = self._running = _Running(held, turn, slot)
            turn.wait()
            with self._lock:
                mine, self._running = self._running is running, None
            if not mine:
                return False
            ending = turn.ending
            assert ending is not None
            self.last_turn_seconds = ending.seconds
            said = rule.answer(
                issue,
                held.tries,
                ending.outcome,
                lines,
                refusal=ending.refusal,
                at_bound=ending.at_bound,
                exit_code=ending.exit_code,
            )
            self._spend(running, ending, said)
            return True
        except (TurnStartError, GitError, OSError) as err:
            self._answer(self.db, held, rule.not_started(issue, str(err)))
            return True
        finally:
            remove_scratch_tree(scratch)

    def _start(self, ctx: TurnContext) -> Turn:
        if self.config.agent == AgentKind.DEMO:
            return start_review(AgentKind.DEMO, ctx, DEMO_CHAT_COMMAND)
        return start_turn(self.config.agent, ctx)

    def _scratch(self, issue: int, path: Path) -> None:
        """The files of the issue's branch (of base when this clone has none) at `path`."""
        path.parent.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(path, ignore_errors=True)
        with own_repo(self.checkout) as repo:
            ref = branch_ref(issue)
            sha = repo.refs[ref].decode() if ref in repo.refs else resolve(repo, self.checkout.base)
            scratch_tree(repo, sha, path)

    def _spend(self, running: _Running, ending: Ending | None, answer: str | None) -> None:
        """What the turn spent on its row and, with credits on, its sale, in one
        transaction (with the answer's write when `answer` is given)."""
        usage = ending.usage if ending is not None else None
        cost = self.cost(usage)
        held = running.held
        spent = chat_turns.Spent(
            running.key_index,
            usage.input_tokens if usage is not None else 0,
            usage.output_tokens if usage is not None else 0,
            cost,
        )
        terms = self.config.credits
        with connection(self.db) as conn, conn.transaction():
            chat_turns.spend(conn, held.row_id, spent)
            if terms is not None and held.issue is not None:
                known = issues.get(conn, held.issue)
                account = payer(None if known is None else known.account, terms.default_account)
                sale = credits.Sale(
                    f"chat:{held.row_id}:{held.tries}",
                    account,
                    held.issue,
                    cost,
                    terms.markup,
                    running.key_index,
                )
                credits.sell(conn, sale)
            if answer is not None:
                self._answer(conn, held, answer)
            rest = self._rest(conn, running.key, ending)
        if cost is not None:
            self.metrics.spend(running.key_index, cost)
        if rest is not None:
            log.info("chat: key %s rests after a refusal: %s", running.key_index, rest)

    def _rest(
        self, conn: psycopg.Connection[Any], key: KeySlot | None, ending: Ending | None
    ) -> Rest | None:
        """Rest `key` after a provider's refusal, as a bee's or a review's ending does
        (RULES 7), so the next turn on it waits; None when the turn met no refusal."""
        if key is None or ending is None or ending.refusal is None:
            return None
        code = code_of(refusal_outcome(sort_refusal(ending.refusal)) or REFUSED_OUTCOME)
        if not moves_rest(code):
            return None
        ended = KeyEnding(code, ending.resets_at, self.config.quota_rest_seconds)
        return keyrests.after_refusal(conn, key, ended)


def answer_unclaimed(db: Db, seconds: float = rule.UNCLAIMED_SECONDS) -> int:
    """Answer, with a sentence, each owed turn no process claimed within `seconds` (the
    chat loop asks, so a question is never left unanswered in silence); how many."""
    answered = 0
    for row_id, issue in chat_turns.unclaimed(db, seconds):
        if chat_turns.answer_unclaimed(db, row_id, rule.unclaimed(issue)):
            answered += 1
            log.warning("chat: row %d was claimed by no process that runs bees", row_id)
    return answered
