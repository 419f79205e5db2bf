"""The one place that wires the hive's supervisor tree (DESIGN 3), by HIVE_ROLE.

    hive (root, rest_for_one)
      http     ServiceActor(ExportServer)                             shutdown 5 s
      reaper   ReaperActor: the stall reaper; the boot reaper, asked  shutdown 5 s
      queen    QueenActor: the boot reaper asked for, then rounds     shutdown 10 s  (role queen)
      reviewer ReviewerActor: finished work judged (reviews stopped)  shutdown 10 s  (role queen)
      shaper   ShaperActor: issues that fail the shape gate shaped    shutdown 10 s  (a shaper set)
      jobs     JobRunnerActor: publish jobs and their waits (left)    shutdown 10 s  (role queen)
      retention RetentionActor: closed issues' rows, worktrees, repack shutdown 5 s   (role queen)
      forge    ForgeActor: GitHub issues polled, the night watch       shutdown 5 s   (forge github)
      chat     ChatActor: the bots in the Matrix room                  shutdown 5 s   (chat matrix)
      runner   runner supervisor (rest_for_one)                                      (runs bees)
        host     HostActor: starts bees, takes ended ones off the work shutdown 5 s
                 registry, fits the store pool
        bees     Pool of BeeActors, one per order, temporary          shutdown = the drain's hold
        claimer  RunnerActor: claims, key check, container guard      shutdown 5 s   (role runner)
        chat-turns ChatTurnsActor: the bee's bots' turns               shutdown 15 s  (chat matrix)
      drain    DrainActor: the drain card on SIGTERM, started last    shutdown 5 s

This module is the one place that wires the hive. `build` runs once, when `hive serve`
starts (or a test builds a tree). It opens the store pool, makes the `Runtime`, and
takes the children for the process's roles from `hive/children.py`, which gives each
actor its own ports (`hive/runtime.py`) and config (`hive/configs.py` reads the
settings). No actor reads the settings or the `Runtime` itself.

A process runs bees when it is a runner, or a Queen whose bees run here
(HIVE_QUEEN_BEES_RUN_ELSEWHERE off). Children stop in the reverse of their start order.
A raise from `build` is a setting that cannot work, or a store that cannot be reached.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NoReturn

from hive.actors.messages import JOBS, QUEEN, IssuesChanged, JobsReady
from hive.children import hive_children
from hive.forge.github.wiring import GitHubForge
from hive.git.repo import Checkout
from hive.http import ExportServer, HttpConfig, store_surface
from hive.metrics import HiveMetrics
from hive.rules.connections import pool_size
from hive.rules.keys import key_slots
from hive.rules.modes import ForgeMode
from hive.runtime import Runtime
from hive.services.orders import queue_numbers
from hive.settings import Settings
from hive.store import credits
from hive.store.connect import listen_url, named, pooled
from hive.store.pool import budget_pool
from supervisors import ExitReason, SignalBridge, Strategy, Supervisor, run_main


@dataclass
class Hive:
    """A built tree: `start()` in-process (tests, embedding), `drain()` as SIGTERM would,
    `stop()` to drain and wait, `run_main()` as `hive serve`'s main."""

    root: Supervisor
    bridge: SignalBridge
    runtime: Runtime
    server: ExportServer
    settings: Settings

    def start(self) -> Hive:
        self.root.start()
        return self

    def issues_changed(self) -> None:
        """Tell the Queen the issues changed: she rounds now, not at her next tick."""
        self.runtime.names.tell(QUEEN, IssuesChanged())

    def drain(self) -> None:
        """What SIGTERM does: the drain hooks, then the ordered stop (a second call is
        the hard stop)."""
        self.bridge.request_stop()

    def stop(self, timeout: float | None = None) -> ExitReason | None:
        """Drain, wait for the root's exit (up to `timeout`), close the store pool."""
        if not self.bridge.first_signal.is_set():
            self.drain()
        reason = self.root.wait(timeout)
        self.close()
        return reason

    def close(self) -> None:
        """Close the store pool and the clone (after the root stopped)."""
        self.runtime.db.close()
        self.runtime.checkout.repo.close()

    def run_main(self) -> NoReturn:
        run_main(self.root, self.bridge)


def build(
    settings: Settings,
    url: str,
    checkout: Checkout,
    *,
    metrics: HiveMetrics | None = None,
    bridge: SignalBridge | None = None,
) -> Hive:
    """The tree for `settings.roles`, not started. Opens the store pool: every caller
    of the process shares it, and it is fitted to the connection budget
    (`hive.rules.connections`) as bees start and end."""
    metrics = metrics or HiveMetrics()
    metrics.expect(
        checks=[name for name, _ in settings.checks],
        key_indexes=[slot.index for slot in key_slots(settings.worker_keys)],
    )
    # through PgBouncer (HIVE_LISTEN_URL another URL) the work connections keep no
    # session state; LISTEN goes to HIVE_LISTEN_URL
    prepare = not pooled(settings, url)
    listen = named(listen_url(settings, url), f"hive-{settings.runner_name}")
    url = named(url, f"hive-{settings.runner_name}")
    # every process keeps one connection of its budget for the shared LISTEN: its
    # claimer's, a Queen's reviewer's, or the board's (every process serves /board)
    db = budget_pool(
        url,
        limit=pool_size(0, listens=True),
        name=f"hive-{settings.runner_name}",
        prepare=prepare,
    )
    rt = Runtime(db=db, url=listen, checkout=checkout, metrics=metrics)
    rt.host.watch(lambda bees: db.fit(pool_size(bees, listens=True)))
    forge = None
    if settings.forge == ForgeMode.GITHUB:
        forge = GitHubForge.from_settings(
            settings,
            db,
            checkout,
            issues_changed=lambda: rt.names.tell(QUEEN, IssuesChanged()),
            jobs_ready=lambda: rt.names.tell(JOBS, JobsReady()),
            metrics=metrics,
        )
    surface = store_surface(
        settings,
        db,
        listen,
        metrics.registry,
        draining=lambda: rt.work.draining,
        github_hook=None if forge is None or forge.hooks is None else forge.hooks.handle,
        metrics=metrics,
    )
    metrics.watch_queue(lambda: queue_numbers(db))
    if settings.credits:
        metrics.watch_credits(lambda: credits.sums(db))
    server = ExportServer(HttpConfig.from_settings(settings), surface)
    bridge = bridge or SignalBridge()
    children = hive_children(rt, settings, bridge, server, forge)
    root = Supervisor("hive", children, strategy=Strategy.REST_FOR_ONE)
    bridge.root = root
    return Hive(root, bridge, rt, server, settings)
