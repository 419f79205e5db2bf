"""The Queen (DESIGN 5.1): she decides which issue goes next, on which key, and writes
the order.

`QueenActor` runs one round per tick, and at once when it is told that something
changed. A round runs in a thread of its own, bounded by ROUND_MAX_SECONDS. What she
is given (her ports and config) is `hive.actors.queen.config`.

A round does this, in order:

1. It takes or renews the Queen lease. Without it, the round does nothing, since
   another Queen decides. Holding it for the first time, she tells the reaper
   `ReapAtBoot` and decides nothing until it answers `BootReaped`. This step and the
   reads of steps 2 and 3 use one connection of the pool, given back before the base's
   refresh.
2. It reads the open issues and the orders it decides by (`Queen._orders`: the live
   ones, not every order ever dispatched), and releases the orders whose floor passed
   (RULES 4).
3. It reads its other facts and asks `plan_round` for a plan.
4. It writes each planned order with `dispatch`. Once the lease is gone it writes no
   more.
5. It writes one row of `queen_report`, with what it dispatched and why others
   waited, when that differs from the last one she wrote or that one is
   REPORT_REPEAT_SECONDS old (`hive.rules.report.report_due`).

A round that passes its bound is abandoned: it writes nothing more, lets the lease go,
and counts in `hive_rounds_stalled_total`. A round that raises (a store error) writes
nothing more; the next round tries again. During a drain a round runs only while
`takes_new_work` says so.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from hive.actors.loop import LoopActor
from hive.actors.messages import QUEEN, QUEEN_WAKES, REAPER, BootReaped, ReapAtBoot
from hive.actors.queen import facts
from hive.actors.queen.config import QueenConfig, QueenPorts
from hive.actors.queen.credit_gate import CreditFacts, credit_facts
from hive.actors.queen.dispatch import Dispatched, dispatch, new_order
from hive.actors.work import Standing
from hive.agents.guard import BYTES_PER_MB, free_memory_bytes
from hive.git.facts import BaseFacts, base_facts
from hive.git.repo import refresh_base, resolve
from hive.rules.drain import WK_ROUND, takes_new_work
from hive.rules.holds import HELD_AFTER_FINISH_MAX_SECONDS
from hive.rules.keys import KeySlot
from hive.rules.report import Said, report_due, report_lines
from hive.rules.round import (
    Limits,
    NotStarted,
    Plan,
    Refusal,
    RoundFacts,
    Stop,
    plan_round,
    render,
)
from hive.rules.spend import day_start
from hive.store import floors, issues, keyrests, leases, orders, reports, spend
from hive.store.db import Db, connection
from hive.store.issues import ISSUES_CHANNEL, Issue
from hive.store.listen import ORDERS_CHANNEL
from supervisors.bounded import Progress, run_bounded

log = logging.getLogger("hive.queen")


@dataclass(frozen=True)
class Gathered:
    """What a round read. It holds the open issues, the round's facts and the base commit
    its orders are judged against. It also holds each issue's send-back notes for its
    next brief."""

    open_issues: list[Issue]
    facts: RoundFacts
    base_sha: str
    notes: dict[int, str]


@dataclass(frozen=True)
class Stored:
    """What a round read from the store, on one connection. That is the open issues,
    the orders it decides by, its clock, the resting keys, the day's spend and the
    credit."""

    open_issues: list[Issue]
    orders: list[orders.Order]
    now: datetime
    resting: dict[int, int]
    spent: float
    owed: CreditFacts


@dataclass(frozen=True)
class RoundResult:
    """One round as its report reads. It holds the issues dispatched, the refusal
    sentences, the skips reported and whether a person must act. When there was no
    round, it says why: another Queen holds the lease, the hive drains, or the round
    was abandoned."""

    dispatched: tuple[int, ...] = ()
    refusals: tuple[str, ...] = ()
    skipped: tuple[tuple[int, str], ...] = ()
    idle: str | None = None
    needs_you: bool = False

    def __bool__(self) -> bool:
        return bool(self.dispatched)

    def __str__(self) -> str:
        if self.idle:
            return f"no round: {self.idle}"
        done = ", ".join(f"#{n}" for n in self.dispatched) or "nothing"
        return f"round: dispatched {done}" + "".join(f"; {s}" for s in self.refusals)


class Queen:
    """The Queen's rounds (see the module). `run_once` is one round; tests call it."""

    def __init__(
        self,
        ports: QueenPorts,
        config: QueenConfig,
        free_memory: Callable[[], int | None] = free_memory_bytes,
        reaps_at_boot: bool = False,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.ports = ports
        self.config = config
        self.free_memory = free_memory
        self.clock = clock
        # the last report written, and when (by `clock`): one that says the same is not
        # written again until it is REPORT_REPEAT_SECONDS old
        self._said: Said | None = None
        self._said_at = 0.0
        # the boot reaper: asked for once this process holds the lease, so a standby
        # replica never ends the orders of the Queen that holds it; set once it ran
        self._booted = threading.Event()
        if not reaps_at_boot:
            self._booted.set()
        self.keys: tuple[KeySlot, ...] = config.keys
        self.lease: leases.Lease | None = None
        self._facts: BaseFacts | None = None
        self._last_key: int | None = None
        self._seeded = False

    # --- the round, bounded ---------------------------------------------------------

    def run_once(self) -> RoundResult:
        """One round in a thread of its own, waited for up to round_max_seconds."""
        done = run_bounded("queen-round", self.config.round_max_seconds, self._round)
        if done.stuck_at is None:
            assert done.value is not None
            return done.value
        self.ports.metrics.rounds_stalled.inc()
        self._let_go()
        log.error(
            "round abandoned after %gs, stuck in: %s; lease let go",
            self.config.round_max_seconds,
            done.stuck_at,
        )
        return RoundResult(idle=f"abandoned while {done.stuck_at}")

    def close(self) -> None:
        """Let the lease go, so another Queen may take over at once. Safe twice."""
        self._let_go()

    def boot_reaped(self) -> None:
        """Note that the reaper's boot pass ran (`BootReaped`). Rounds decide from now on."""
        self._booted.set()

    def _let_go(self) -> None:
        lease, self.lease = self.lease, None
        if lease is not None:
            try:
                leases.release(self.ports.db, lease)
            except Exception as err:
                log.warning("could not release the Queen lease: %s", err)

    # --- one round ------------------------------------------------------------------

    def _round(self, state: Progress) -> RoundResult:
        rt, cfg = self.ports, self.config
        # the lease, the reads and the floors' releases on one connection of the pool:
        # one checkout a round, not one a statement; it goes back before the base's
        # refresh (git, perhaps the network) and the writes (a local bee's start takes
        # connections of its own)
        with connection(rt.db) as db:
            state.at("taking the Queen lease")
            lease = self._hold_lease(db)
            if lease is None:
                return RoundResult(idle="another Queen holds the lease")
            if not self._booted.is_set():
                # asked each round until it ran: a boot reap that met a store blip is
                # tried again, or the orders the last Queen ran here stay unfinished for
                # hours
                rt.names.tell(REAPER, ReapAtBoot())
                return RoundResult(idle="waiting for the boot reaper")
            if rt.work.draining and not takes_new_work(not cfg.elsewhere, rt.work.holding()):
                return RoundResult(idle="draining")
            stored = self._read(db, state)
        gathered = self._gather(state, stored)
        plan = plan_round(gathered.facts)
        dispatched, refusals = self._write(plan, gathered, lease, state)
        state.at("writing the report")
        result = RoundResult(
            tuple(dispatched),
            tuple(render(r) for r in refusals),
            tuple((s.number, render(s)) for s in plan.skipped),
            needs_you=plan.needs_you,
        )
        self._report(result)
        rt.metrics.rounds.inc()
        return result

    def _read(self, db: Db, state: Progress) -> Stored:
        """The round's store reads, all on `db`. They are the open issues, the orders it
        decides by (read again after a release), the resting keys, the day's spend and
        the credit."""
        cfg = self.config
        state.at("reading issues")
        open_issues = issues.listing(db, open_only=True)
        state.at("reading orders")
        round_orders = self._orders(db, open_issues)
        state.at("releasing work past its floor")
        if self._release_floors(db, round_orders):
            round_orders = self._orders(db, open_issues)  # as the releases left them
        now = facts.utcnow()
        state.at("reading key rests and the day's spend")
        resting = keyrests.resting_seconds(db, self.keys)
        spent = spend.since(db, day_start(now)) if cfg.spend_cap_usd > 0 else 0.0
        state.at("reading credit")
        owed = credit_facts(db, cfg.credits, open_issues, now)
        return Stored(open_issues, round_orders, now, resting, spent, owed)

    def _release_floors(self, db: Db, round_orders: list[orders.Order]) -> bool:
        """Release the orders whose floor passed (RULES 4), each held to the state table.
        Their issues may go again in this round. Returns whether one was released."""
        rt = self.ports
        released = False
        for order, judged in facts.past_floor(round_orders, facts.utcnow()):
            moved = floors.release(db, order.issue, order.conversation_id, state=judged)
            released = released or moved.landed
            if moved.landed:
                log.info(
                    "released: its floor in state %s passed",
                    judged.name,
                    extra={"issue": order.issue},
                )
            elif moved.illegal:
                rt.metrics.illegal_transitions.inc()
        return released

    def _orders(self, db: Db, open_issues: list[Issue]) -> list[orders.Order]:
        """The orders a round decides by. This process's first round reads every order,
        because the key scan starts after the newest order's key. Later rounds read the
        live ones (`orders.live`). Those are in flight, of an open issue, ended recently
        enough to hold their files, or resting in a state with a floor. The ended orders
        of closed issues grow with the history and change none of the round's
        decisions."""
        if not self._seeded:
            return orders.listing(db)
        held_since = facts.utcnow() - timedelta(seconds=HELD_AFTER_FINISH_MAX_SECONDS)
        return orders.live(db, [issue.number for issue in open_issues], held_since)

    def _gather(self, state: Progress, stored: Stored) -> Gathered:
        """Read the base and this process beside what the round read from the store.
        That gives the round's facts, the base commit the orders are judged against and
        the review notes the next attempts carry."""
        rt, cfg = self.ports, self.config
        if not self._seeded:
            self._last_key, self._seeded = facts.last_key(stored.orders), True
        state.at("reading base")
        base = self._base_facts()
        found = facts.round_facts(
            stored.open_issues,
            stored.orders,
            base,
            stored.now,
            limits=Limits(cfg.max_workers, cfg.lanes_per_key, cfg.bee_memory_mb, cfg.elsewhere),
            keys=[k.index for k in self.keys],
            resting=stored.resting,
            last_key=self._last_key,
            host_ready=rt.host.ready,
            free_memory_mb=self._free_memory_mb(),
            spent_today_usd=stored.spent,
            spend_cap_usd=cfg.spend_cap_usd,
        )
        found = replace(found, payers=stored.owed.payers, balances=stored.owed.balances)
        notes = facts.carried_notes(stored.orders)
        return Gathered(stored.open_issues, found, base.sha, notes)

    def _write(
        self, plan: Plan, gathered: Gathered, lease: leases.Lease, state: Progress
    ) -> tuple[list[int], list[Refusal]]:
        """Write the planned orders in turn. Returns the issues dispatched and the
        refusals, the plan's own last. A lease gone stops the writing. An order not
        started is passed over."""
        rt, cfg = self.ports, self.config
        by_number = {issue.number: issue for issue in gathered.open_issues}
        dispatched: list[int] = []
        refusals: list[Refusal] = []
        for planned in plan.orders:
            state.at(f"dispatching #{planned.number}")
            issue, key = by_number[planned.number], self._key(planned.key)
            note = gathered.notes.get(planned.number, "")
            new = new_order(
                rt.checkout.base,
                issue,
                key,
                gathered.base_sha,
                cfg.provider,
                cfg.model,
                note,
                cfg.credits,
            )
            answer = dispatch(rt, new, issue, key, lease, elsewhere=cfg.elsewhere, bee=cfg.bee)
            if answer.code is Dispatched.LEASE_GONE:  # another Queen's now, or let go
                return dispatched, [*refusals, Stop.LEASE_GONE]
            if not answer.counts:
                refusals.append(NotStarted(planned.number, answer.words()))
                continue
            self._last_key = planned.key
            dispatched.append(planned.number)
        if plan.refusal is not None:
            refusals.append(plan.refusal)
        return dispatched, refusals

    def _hold_lease(self, db: Db) -> leases.Lease | None:
        """The lease this round writes under, renewed or claimed. None means another
        Queen holds it. The round keeps this lease. A round that was abandoned (its lease
        let go) or overtaken by another Queen carries a fence that no longer holds."""
        ttl = self.config.lease_ttl_seconds
        if self.lease is not None:
            self.lease = leases.renew(db, self.lease, ttl)
        if self.lease is None:
            self.lease = leases.claim(db, leases.QUEEN_LEASE, self.config.holder, ttl)
        return self.lease

    def _base_facts(self) -> BaseFacts:
        rt, repo_url = self.ports, self.config.repo_url
        with rt.checkout.lock:
            if repo_url:
                try:
                    refresh_base(
                        rt.checkout.repo, repo_url, rt.checkout.base, auth=rt.checkout.auth
                    )
                except Exception as err:  # judge against the base we have
                    log.warning("base not refreshed: %s", err)
            sha = resolve(rt.checkout.repo, rt.checkout.base)
            if self._facts is None or self._facts.sha != sha:
                self._facts = base_facts(rt.checkout.repo, sha)
        return self._facts

    def _free_memory_mb(self) -> int | None:
        """Free memory here in MB (None: not measured, or bees run elsewhere)."""
        if self.config.elsewhere:
            return None
        free = self.free_memory()
        return None if free is None else free // BYTES_PER_MB

    def _key(self, index: int) -> KeySlot:
        return next(k for k in self.keys if k.index == index)

    def _report(self, result: RoundResult) -> None:
        """Write one row in `queen_report`. It holds the headline and names each refusal
        and skip, up to REPORT_LINES_MAX lines and then a count of the rest. No row is
        written when the last one said the same and is not REPORT_REPEAT_SECONDS old yet
        (`report_due`)."""
        if result.dispatched:
            headline = "dispatched " + ", ".join(f"#{n}" for n in result.dispatched)
        elif result.refusals:
            headline = result.refusals[0]
        else:
            headline = "nothing to dispatch"
        body = report_lines(
            [*result.refusals, *(f"#{n}: {reason}" for n, reason in result.skipped)]
        )
        text = "\n".join(body)
        said: Said = (headline, text, result.needs_you)
        now = self.clock()
        if not report_due(self._said, said, now - self._said_at):
            return
        reports.add(self.ports.db, headline, text, needs_you=result.needs_you)
        self._said, self._said_at = said, now


class QueenActor(LoopActor):
    """Known as QUEEN. She rounds every HIVE_QUEEN_TICK_SECONDS, and at once when:

    - an issue is added, reopened or edited anywhere (NOTIFY hive_issues);
    - an order ends here (told `OrderEnded` or `OrdersReaped`), or anywhere in
      elsewhere mode (NOTIFY);
    - the tree has started (told `TreeStarted`).

    Her first round that holds the lease asks the reaper for its boot pass; `BootReaped`
    lets her decide. Her rounds count as work of kind WK_ROUND, which the drain leaves
    to the store. `on_stop` lets the Queen lease go."""

    def __init__(self, ports: QueenPorts, config: QueenConfig, reaps_at_boot: bool) -> None:
        queen = Queen(ports, config, reaps_at_boot=reaps_at_boot)
        super().__init__(
            "queen",
            queen,
            queen.config.tick_seconds,
            registry=ports.names,
            known_as=QUEEN,
            wakes_on=QUEEN_WAKES,
            # an issue added, reopened or edited anywhere (the CLI, the API, a webhook)
            # wakes her; in elsewhere mode an order's ending too
            listen_url=ports.listen_url,
            listen_channels=(ISSUES_CHANNEL, ORDERS_CHANNEL)
            if queen.config.elsewhere
            else (ISSUES_CHANNEL,),
        )
        self.ports = ports
        self.queen = queen
        self.rounds = Standing(WK_ROUND, "queen rounds")
        self._unregister: Callable[[], None] = lambda: None

    def on_receive(self, message: Any) -> None:
        """`BootReaped` lets her rounds decide. It wakes her as the other messages do."""
        if isinstance(message, BootReaped):
            self.queen.boot_reaped()
        super().on_receive(message)

    def on_start(self) -> None:
        self._unregister = self.ports.work.add(self.rounds)
        super().on_start()

    def on_stop(self) -> None:
        try:
            super().on_stop()
        finally:
            self.rounds.end()
            self._unregister()
