"""The claimer (DESIGN 5.2, 5.3): a runner's loop that claims queued orders and starts a
bee for each.

`RunnerActor` runs a pass at start, on each NOTIFY of a new order, when told a slot is
free or the drain began, and every `HIVE_RUNNER_SECONDS`.

A pass claims as many orders as there are free slots, in one statement. The container
guard may claim fewer: without memory for another bee, the order stays queued for
another runner. For each claimed order the runner checks the key. It needs a key at the
order's `key_index` with the same fingerprint; a runner never takes another key, since
that would be another account. Without it, the claim is refused and left for a runner
that has the key. Otherwise the order goes to a new bee in the pool.

Each pass also keeps `queen_runner.seen_at` fresh. Once the drain began, a pass claims
nothing. A pass that raises (a store error) is retried by the loop; a claim it could not
start is given back.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from psycopg_pool import ConnectionPool

from hive.actors.bee.bee import Bee
from hive.actors.bee.config import BeeConfig, BeePorts
from hive.actors.bee.host import BeeHost
from hive.actors.bee.order import BeeOrder
from hive.actors.bee.start import plan_of
from hive.actors.loop import LoopActor
from hive.actors.messages import CLAIMER, CLAIMER_WAKES
from hive.actors.work import WorkRegistry
from hive.agents.guard import bees_that_fit, free_memory_bytes
from hive.metrics import HiveMetrics
from hive.rules.connections import seen_due
from hive.rules.jitter import POLL_JITTER
from hive.rules.keys import KeySlot
from hive.store import issues, orders, runners
from hive.store.listen import is_ending
from hive.store.orders import ClaimedOrder
from supervisors import Registry

log = logging.getLogger("hive.runner")


@dataclass(frozen=True)
class ClaimerPorts:
    """What the claimer uses. It holds the store and its LISTEN URL, the bee host it
    starts bees in and the work registry, which says whether the drain is on. It also
    holds the metrics, the names it is known by and what its bees use."""

    db: ConnectionPool[Any]
    listen_url: str
    host: BeeHost
    work: WorkRegistry
    metrics: HiveMetrics
    names: Registry
    bees: BeePorts


@dataclass(frozen=True)
class ClaimerConfig:
    """The claimer's config. It holds this runner's name, slots, memory guard and poll.
    It holds its own keys, the only ones it may run an order on, and the config its
    bees start with."""

    name: str
    bee: BeeConfig
    slots: int = 1
    bee_memory_mb: int = 1024
    poll_seconds: float = 15.0
    keys: tuple[KeySlot, ...] = ()


@dataclass(frozen=True)
class ClaimPass:
    """What one pass did; true when it claimed or refused something."""

    started: tuple[int, ...] = ()
    refused: tuple[int, ...] = ()
    held_back: str | None = None

    def __bool__(self) -> bool:
        return bool(self.started or self.refused)

    def __str__(self) -> str:
        parts = []
        if self.started:
            parts.append("started " + ", ".join(f"#{n}" for n in self.started))
        if self.refused:
            parts.append("refused the key of " + ", ".join(f"#{n}" for n in self.refused))
        if self.held_back:
            parts.append(self.held_back)
        return "claim pass: " + "; ".join(parts or ["nothing"])


class Claimer:
    """The claimer's passes (see the module). `run_once` is one pass; tests call it."""

    def __init__(
        self,
        ports: ClaimerPorts,
        config: ClaimerConfig,
        free_memory: Callable[[], int | None] = free_memory_bytes,
    ) -> None:
        self.ports = ports
        self.config = config
        self.free_memory = free_memory
        self.keys: dict[int, KeySlot] = {k.index: k for k in config.keys}
        self._registered = False
        self._seen_at: float | None = None  # monotonic time of the last write of the row
        self._reported: tuple[int, bool] = (0, False)

    def run_once(self) -> ClaimPass:
        rt = self.ports
        self._seen()
        started: list[int] = []
        refused: list[int] = []
        held_back = None
        while not rt.work.draining and rt.host.ready:
            free = self.config.slots - rt.host.running()
            if free <= 0:
                break
            room = bees_that_fit(self.free_memory(), self.config.bee_memory_mb, free)
            if room == 0:
                held_back = (
                    f"not claiming: less free memory than HIVE_BEE_MEMORY_MB="
                    f"{self.config.bee_memory_mb} for another bee"
                )
                break
            # every free slot (that memory allows) in one statement
            batch = orders.claim_many(rt.db, self.config.name, room)
            if not batch or not self._take(batch, started, refused):
                break
            if len(batch) < room:
                break  # the queue held no more for this runner: no second statement
        return ClaimPass(tuple(started), tuple(refused), held_back)

    def hungry(self) -> bool:
        """Whether a hint should wake this claimer. It should when a slot is free and no
        drain is on."""
        rt = self.ports
        return not rt.work.draining and rt.host.ready and rt.host.running() < self.config.slots

    def _take(self, batch: list[ClaimedOrder], started: list[int], refused: list[int]) -> bool:
        """Start a bee for each claimed order, refusing those whose key this runner
        lacks. Returns False once one could not start, because the pool went away or the
        drain began. That order and the rest of the batch are given back at once."""
        rt = self.ports
        rest = list(batch)
        try:
            while rest:
                order = rest.pop(0)
                rt.metrics.claims.inc()
                rt.metrics.claim_seconds.observe(
                    max(0.0, (order.claimed_at - order.queued_at).total_seconds())
                )
                key = self._key_for(order)
                if key is None:
                    self._refuse(order)
                    refused.append(order.issue)
                    continue
                if not self._start(order, key):
                    return False
                started.append(order.issue)
            return True
        finally:
            for order in rest:
                self._release(order)

    def close(self) -> None:
        """A last sign of life (running and draining as they stand)."""
        try:
            self._seen(always=True)
        except Exception as err:
            log.warning("could not update queen_runner at stop: %s", err)

    def _key_for(self, order: ClaimedOrder) -> str | None:
        """The key value for the order's key_index. None means this runner must refuse:
        it has no key at that index, or another account is behind it. An order that asks
        for no key gets an empty value."""
        if order.key_index is None:
            return ""
        slot = self.keys.get(order.key_index)
        if slot is None or slot.fingerprint != order.key_fingerprint:
            return None
        return slot.value

    def _refuse(self, order: ClaimedOrder) -> None:
        rt = self.ports
        has = "a different key" if order.key_index in self.keys else "no key"
        orders.refuse(rt.db, order.fence)
        rt.metrics.key_refusals.inc()
        log.warning(
            "refused: this runner has %s at key_index %s; left for a runner that has it",
            has,
            order.key_index,
            extra={"issue": order.issue},
        )

    def _start(self, order: ClaimedOrder, key: str) -> bool:
        """Start the order's bee. A claim that could not start is given back at once. An
        order left claimed would wait HIVE_RUNNER_SILENT_MINUTES for the reaper."""
        try:
            if self._start_bee(order, key):
                return True
        except BaseException:
            self._release(order)
            raise
        self._release(order)
        return False

    def _release(self, order: ClaimedOrder) -> None:
        try:
            orders.release(self.ports.db, order.fence)
        except Exception as err:  # the reaper frees it when its heartbeat stays silent
            log.warning("could not give back the claim: %s", err, extra={"issue": order.issue})

    def _start_bee(self, order: ClaimedOrder, key: str) -> bool:
        rt = self.ports
        issue = issues.get(rt.db, order.issue)
        fence = order.fence
        plan = plan_of(
            self.config.bee.start,
            issue=order.issue,
            title=issue.title if issue else "",
            body=issue.body if issue else "",
            base=order.base,
            base_sha=order.base_sha,
            boundary=tuple(order.owned_paths),
            brief=order.brief or "",
            key=key,
        )
        sells = order.credit_account is not None
        started = BeeOrder(fence, plan, key_index=order.key_index, sells=sells)
        bee = Bee(rt.bees, started, self.config.bee)
        if rt.host.start(bee):
            return True
        # the pool went away, or the drain began, between the check and the start
        log.warning(
            "claimed but could not start a bee; claim given back", extra={"issue": order.issue}
        )
        return False

    def _seen(self, *, always: bool = False) -> None:
        """Write this runner's row when `seen_due` says so (or `always`)."""
        rt, cfg = self.ports, self.config
        running, draining = rt.host.running(), rt.work.draining
        now = time.monotonic()
        since = None if self._seen_at is None else now - self._seen_at
        changed = (running, draining) != self._reported
        if not always and not seen_due(since, changed, cfg.poll_seconds):
            return
        if not (
            self._registered and runners.seen(rt.db, cfg.name, running=running, draining=draining)
        ):
            runners.register(rt.db, cfg.name, cfg.slots)
            runners.seen(rt.db, cfg.name, running=running, draining=draining)
            self._registered = True
        self._seen_at, self._reported = now, (running, draining)


class RunnerActor(LoopActor):
    """The claimer's loop, registered as CLAIMER. It runs a pass at start. It runs
    another on each NOTIFY, when told a slot is free or the drain began, and every poll."""

    def __init__(self, ports: ClaimerPorts, config: ClaimerConfig) -> None:
        claimer = Claimer(ports, config)
        super().__init__(
            "runner",
            claimer,
            claimer.config.poll_seconds,
            registry=ports.names,
            known_as=CLAIMER,
            wakes_on=CLAIMER_WAKES,
            listen_url=ports.listen_url,
            listen_skips=is_ending,
            # a host's claimers in one process share its LISTEN: a queued order wakes one
            # with a free slot, not all of them (a full one is told when a slot frees)
            listen_one_of=True,
            listen_hungry=claimer.hungry,
            jitter=POLL_JITTER,
        )
