"""The reapers (DESIGN 5, RULES 4). They clean up after crashes. They never take the
order of a bee this process runs; its issues are passed as `spare`.

- The boot reaper runs once in a Queen process. It runs when the Queen first holds the
  lease and tells it `ReapAtBoot`. She decides nothing until it answers `BootReaped`.
  It ends the unfinished orders the Queen ran herself (`queued_at IS NULL`), because
  her restart killed their bees. It runs in the reaper's own pass, never on the
  Queen's thread. A standby replica waiting for the lease reaps nothing, so it never
  ends the live Queen's orders. Runner orders survive a Queen restart. Each order is
  salvaged first when its worktree is on this disk.
- The stall reaper runs in a Queen process every `min(60 s, silent window / 4, stall
  window / 4)`. It releases runner orders whose heartbeat has been silent for
  `HIVE_RUNNER_SILENT_MINUTES`. Those are never salvaged, since nothing of that bee is
  on this disk. It also ends started orders whose turn began more than
  `HIVE_STALL_MINUTES` ago by `dispatched_at`, salvaging the local ones.
- A queued order nobody claimed is never reaped, unless every runner refused it. After
  the silent window such an order ends as `refused`, with a sentence naming the runners
  (hive/actors/reaper/refused.py). An order that waited the window while no runner was
  seen at all stays queued. A round report then says so once (`hive why`, needs you),
  until the set of such issues changes.

After a reap the Queen is told `OrdersReaped`, or `BootReaped` after the boot pass. The
freed issue is dispatched again at once.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from hive.actors.bee.ending import salvage_notes
from hive.actors.loop import LoopActor
from hive.actors.messages import QUEEN, REAPER, REAPER_WAKES, BootReaped, OrdersReaped, ReapAtBoot
from hive.actors.reaper.refused import end_refused_orders, waiting_for_no_runner
from hive.agents.transcript import HIVE
from hive.git.salvage import salvage
from hive.git.worktrees import worktree_path
from hive.metrics import HiveMetrics
from hive.rules.refusals import no_runner_sentence
from hive.store import orders, reaping, reports, transcript
from hive.store.db import Db
from hive.store.orders import Order
from supervisors import Registry

log = logging.getLogger("hive.reaper")

STALL_PASS_MAX_SECONDS = 60.0
# the stall reaper looks this many times per window, so an order is freed within a
# quarter window of its deadline
PASSES_PER_WINDOW = 4


@dataclass(frozen=True)
class ReaperPorts:
    """What the reaper uses. It holds the store, this process's workdir (where a reaped
    order's worktree is salvaged), the metrics and the names it tells. It also holds
    the issues whose bee runs in this process, which are never reaped."""

    db: Db
    workdir: Path
    metrics: HiveMetrics
    names: Registry
    running_here: Callable[[], frozenset[int]]


@dataclass(frozen=True)
class ReaperConfig:
    boot: bool = True
    stall: bool = True
    silent_minutes: float = 10.0
    stall_minutes: float = 120.0

    @property
    def interval_seconds(self) -> float:
        return min(
            STALL_PASS_MAX_SECONDS,
            self.silent_minutes * 60 / PASSES_PER_WINDOW,
            self.stall_minutes * 60 / PASSES_PER_WINDOW,
        )


@dataclass(frozen=True)
class ReapPass:
    """What one pass ended. That is silent runners' orders, stalled turns and, in a boot
    pass, the Queen's own. `salvaged` names the ones salvaged here."""

    silent: tuple[int, ...] = ()
    stalled: tuple[int, ...] = ()
    boot: tuple[int, ...] = ()
    salvaged: tuple[int, ...] = ()
    refused: tuple[int, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.silent or self.stalled or self.boot or self.refused)

    def __str__(self) -> str:
        parts = [
            f"{name} " + ", ".join(f"#{n}" for n in issues)
            for name, issues in (
                ("reaped at boot", self.boot),
                ("released (runner silent)", self.silent),
                ("reaped (no completion)", self.stalled),
                ("ended (every runner refused)", self.refused),
                ("salvaged", self.salvaged),
            )
            if issues
        ]
        return "reaper: " + "; ".join(parts or ["nothing"])


class Reaper:
    def __init__(self, ports: ReaperPorts, config: ReaperConfig) -> None:
        self.ports = ports
        self.config = config
        self._said_no_runner: tuple[int, ...] = ()
        self._boot_asked = threading.Event()

    def ask_boot(self) -> None:
        """Note that the Queen asked for the boot pass (`ReapAtBoot`). The next pass runs
        it first."""
        self._boot_asked.set()

    def boot(self) -> ReapPass:
        """End the Queen's own unfinished orders (see the module), then tell her
        `BootReaped`. When it raises (the store is away), she is told nothing and keeps
        asking."""
        rt = self.ports
        if not self.config.boot:
            rt.names.tell(QUEEN, BootReaped())
            return ReapPass()
        booted = reaping.reap_at_boot(rt.db, spare=rt.running_here())
        reaped = booted.ended
        salvaged = self._salvage(reaped)
        rt.metrics.reaped.labels(reaper="boot").inc(len(reaped))
        rt.metrics.illegal_transitions.inc(len(booted.refused))
        result = ReapPass(boot=_issues(reaped), salvaged=salvaged)
        rt.names.tell(QUEEN, BootReaped(result.boot))
        return result

    def run_once(self) -> ReapPass:
        """The boot pass when the Queen asked for it (asked until it ran), then one stall
        pass (see the module)."""
        booted = ReapPass()
        if self._boot_asked.is_set():
            booted = self.boot()
            self._boot_asked.clear()
        stalled = self._stall_pass()
        return replace(stalled, boot=booted.boot, salvaged=booted.salvaged + stalled.salvaged)

    def _stall_pass(self) -> ReapPass:
        if not self.config.stall:
            return ReapPass()
        rt, cfg = self.ports, self.config
        spare = rt.running_here()
        silent_reaping = reaping.reap_silent_runners(rt.db, cfg.silent_minutes, spare=spare)
        stalled_reaping = reaping.reap_stalled_turns(rt.db, cfg.stall_minutes, spare=spare)
        silent, stalled = silent_reaping.ended, stalled_reaping.ended
        refused = len(silent_reaping.refused) + len(stalled_reaping.refused)
        rt.metrics.illegal_transitions.inc(refused)
        salvaged = self._salvage([o for o in stalled if o.queued_at is None])
        rt.metrics.reaped.labels(reaper="stall").inc(len(silent))
        rt.metrics.reaped.labels(reaper="two_hour").inc(len(stalled))
        unclaimable = end_refused_orders(rt.db, cfg.silent_minutes * 60)
        self._say_no_runner(cfg.silent_minutes * 60)
        rt.metrics.reaped.labels(reaper="refused").inc(len(unclaimable.issues))
        rt.metrics.illegal_transitions.inc(unclaimable.illegal)
        result = ReapPass(
            silent=_issues(silent),
            stalled=_issues(stalled),
            salvaged=salvaged,
            refused=unclaimable.issues,
        )
        if result:
            rt.names.tell(QUEEN, OrdersReaped(result.silent + result.stalled + result.refused))
        return result

    def close(self) -> None:
        pass

    def _say_no_runner(self, window_seconds: float) -> None:
        """Tell a person, once per set of issues, of the orders no runner is there to
        take."""
        nowhere = waiting_for_no_runner(self.ports.db, window_seconds)
        if nowhere and nowhere != self._said_no_runner:
            sentence = no_runner_sentence(nowhere, window_seconds)
            reports.add(self.ports.db, sentence, needs_you=True)
            log.warning("%s", sentence)
        self._said_no_runner = nowhere

    def _salvage(self, reaped: list[Order]) -> tuple[int, ...]:
        """Commit what each reaped local bee left in its worktree, where it is here."""
        rt = self.ports
        done = []
        for order in reaped:
            path = worktree_path(rt.workdir, order.issue)
            if not path.exists():
                continue
            try:
                kept = salvage(path, order.owned_paths, "reaped")
            except Exception as err:
                log.warning("salvage failed: %s", err, extra={"issue": order.issue})
                continue
            for sentence in salvage_notes(kept):
                try:
                    transcript.append(rt.db, order.conversation_id, order.issue, HIVE, sentence)
                except Exception as err:  # a trace: its loss stops no reaping
                    log.warning("transcript line dropped: %s", err, extra={"issue": order.issue})
            if kept.sha is not None:
                orders.record_salvage(
                    rt.db, order.issue, order.conversation_id, kept.sha, kept.committed
                )
            done.append(order.issue)
        return tuple(done)


def _issues(reaped: list[Order]) -> tuple[int, ...]:
    return tuple(order.issue for order in reaped)


class ReaperActor(LoopActor):
    """The reapers' actor, registered as REAPER. It runs a stall pass every
    `interval_seconds`. The Queen tells it `ReapAtBoot` in her first round that holds
    the Queen lease. That is "at start" for the Queen that decides; a standby replica
    never tells it while another Queen's bees run. Its next pass then runs at once, with
    the boot reaper first."""

    def __init__(self, ports: ReaperPorts, config: ReaperConfig) -> None:
        self.reaper = Reaper(ports, config)
        super().__init__(
            "reaper",
            self.reaper,
            self.reaper.config.interval_seconds,
            registry=ports.names,
            known_as=REAPER,
            wakes_on=REAPER_WAKES,
        )

    def on_receive(self, message: Any) -> None:
        """`ReapAtBoot` asks for the boot pass and wakes the loop; it runs there."""
        if isinstance(message, ReapAtBoot):
            self.reaper.ask_boot()
        super().on_receive(message)
