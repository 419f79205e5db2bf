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
gives each actor its own ports and config (`hive/configs.py` reads the settings).
No actor reads the settings or the `Runtime` itself.

A process runs bees when it is a runner, or a Queen whose bees run here
(HIVE_QUEEN_BEES_RUN_ELSEWHERE off). Children stop in the reverse of their start order.
A raise from `build` is a setting that cannot work, or a store that cannot be reached.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NoReturn

from hive import configs
from hive.actors.bee.actor import BeeActor
from hive.actors.bee.config import BeePorts
from hive.actors.bee.host import HostActor
from hive.actors.chat import ChatActor
from hive.actors.chat_turns import POLL_SECONDS as CHAT_TURNS_POLL_SECONDS
from hive.actors.chat_turns import ChatTurnsActor
from hive.actors.drain import DrainActor, DrainConfig
from hive.actors.forge import ForgeActor, ForgeWork
from hive.actors.jobrunner import JobRunnerActor
from hive.actors.messages import FORGE, JOBS, QUEEN, IssuesChanged, JobsReady
from hive.actors.queen.config import QueenPorts
from hive.actors.queen.queen import QueenActor
from hive.actors.reaper.reaper import ReaperActor, ReaperPorts
from hive.actors.retention import RetentionActor
from hive.actors.reviewer.reviewer import ReviewerActor, holds_queen_lease
from hive.actors.reviewer.verdicts import after_verdict
from hive.actors.runner import ClaimerPorts, RunnerActor
from hive.actors.service import ServiceActor
from hive.actors.shaper import Shaper, ShaperActor
from hive.chat.room import Room
from hive.chat.turns import ChatTurns
from hive.forge.github.wiring import GitHubForge
from hive.git.repo import Checkout
from hive.http import ExportServer, HttpConfig, store_surface
from hive.metrics import HiveMetrics
from hive.rules.connections import pool_size
from hive.rules.drain import HAND_BACK_SECONDS
from hive.rules.keys import key_slots
from hive.rules.modes import AgentKind, ForgeMode, PublishMode
from hive.rules.spend import Cost
from hive.runtime import Runtime
from hive.services.orders import queue_numbers
from hive.settings import Settings
from hive.store import credits
from hive.store.connect import listen_url, named, pooled
from hive.store.pool import budget_pool
from supervisors import (
    ChildKind,
    ChildSpec,
    ExitReason,
    Pool,
    Restart,
    SignalBridge,
    Strategy,
    Supervisor,
    run_main,
)

# Per-kind grace, in one place. A worker's stop is a thread's join: these bound it.
HTTP_SHUTDOWN_SECONDS = 5.0  # the server stops within its poll interval
REAPER_SHUTDOWN_SECONDS = 5.0  # a pass in hand finishes
QUEEN_SHUTDOWN_SECONDS = 10.0  # a round in hand finishes (its bee starts are bounded)
# reviews are stopped, not waited for (the drain stops them; the rows are reviewed later)
REVIEWER_SHUTDOWN_SECONDS = 10.0
SHAPER_SHUTDOWN_SECONDS = 10.0  # a shaping turn in hand is stopped (close)
# jobs are left to the store: a check in hand is stopped (its job runs it again later)
JOBS_SHUTDOWN_SECONDS = 10.0
RETENTION_SHUTDOWN_SECONDS = 5.0  # a pass in hand is a few short batches
CLAIMER_SHUTDOWN_SECONDS = 5.0  # a claim pass in hand finishes
HOST_SHUTDOWN_SECONDS = 5.0  # a bee's start in hand finishes
DRAIN_SHUTDOWN_SECONDS = 5.0  # removes its hook
FORGE_SHUTDOWN_SECONDS = 5.0  # a poll in hand finishes (its requests are bounded)
CHAT_SHUTDOWN_SECONDS = 5.0  # a pass in hand finishes (its sync waits at most a second)
# a chat turn in hand is waited for a few seconds (the loop's join), then stopped (the
# turn-stop rule's lane) and its row let go
CHAT_TURNS_SHUTDOWN_SECONDS = 15.0


def runs_bees(settings: Settings) -> bool:
    return settings.is_runner or (settings.is_queen and not settings.queen_bees_run_elsewhere)


def bee_slots(settings: Settings) -> int:
    """Bees this process may run at once: a runner's slots; a Queen running her own bees
    may run up to HIVE_MAX_WORKERS of them."""
    slots = settings.runner_slots if settings.is_runner else 0
    if settings.is_queen and not settings.queen_bees_run_elsewhere:
        slots = max(slots, settings.max_workers)
    return slots


def bee_shutdown_seconds(drain: DrainConfig) -> float:
    """The drain's hold: a bee may run to the cap, then its hand-back has HAND_BACK_SECONDS.
    A bee stopped by the tree outside a drain is handed back within the latter."""
    return float(drain.cap_seconds + HAND_BACK_SECONDS)


def bee_ports(rt: Runtime) -> BeePorts:
    return BeePorts(rt.db, rt.checkout, rt.metrics, rt.names, rt.work, rt.endings)


def claimer_ports(rt: Runtime) -> ClaimerPorts:
    return ClaimerPorts(rt.db, rt.url, rt.host, rt.work, rt.metrics, rt.names, bee_ports(rt))


def queen_ports(rt: Runtime) -> QueenPorts:
    return QueenPorts(
        rt.db, rt.url, rt.checkout, rt.host, rt.work, rt.metrics, rt.names, bee_ports(rt)
    )


def reaper_ports(rt: Runtime) -> ReaperPorts:
    return ReaperPorts(rt.db, rt.checkout.workdir, rt.metrics, rt.names, rt.host.issues)


def _usd(cost: Cost | None) -> float | None:
    return None if cost is None else cost.usd


def runner_children(rt: Runtime, settings: Settings, drain: DrainConfig) -> list[ChildSpec]:
    bee = ChildSpec(
        "bee", BeeActor.start, restart=Restart.TEMPORARY, shutdown=bee_shutdown_seconds(drain)
    )
    specs = [
        # before the pool and stopped after it: the bees it hands back leave through it
        ChildSpec(
            "host", HostActor.start, args=(rt.host, rt.names), shutdown=HOST_SHUTDOWN_SECONDS
        ),
        ChildSpec("bees", lambda: rt.host.attach(Pool("bees", bee)), kind=ChildKind.SUPERVISOR),
    ]
    turns = configs.chat_turns(settings)
    if turns is not None:
        cost = configs.accounting(settings).cost
        work = ChatTurns(rt.db, rt.checkout, turns, lambda usage: _usd(cost(usage)))
        specs.append(
            ChildSpec(
                "chat-turns",
                ChatTurnsActor.start,
                args=(work, rt.names, rt.url, CHAT_TURNS_POLL_SECONDS),
                shutdown=CHAT_TURNS_SHUTDOWN_SECONDS,
            )
        )
    if settings.is_runner:
        claimer = configs.claimer_config(settings)
        specs.append(
            ChildSpec(
                "claimer",
                RunnerActor.start,
                args=(claimer_ports(rt), claimer),
                shutdown=CLAIMER_SHUTDOWN_SECONDS,
            )
        )
    return specs


def hive_children(
    rt: Runtime,
    settings: Settings,
    bridge: SignalBridge,
    server: ExportServer,
    forge: GitHubForge | None = None,
) -> list[ChildSpec]:
    """The root's children for `settings.roles`; each actor gets its own config here."""
    drain = configs.drain_config(settings)
    reaper = configs.reaper_config(settings)
    specs = [
        ChildSpec("http", ServiceActor.start, args=(server,), shutdown=HTTP_SHUTDOWN_SECONDS),
        ChildSpec(
            "reaper",
            ReaperActor.start,
            args=(reaper_ports(rt), reaper),
            shutdown=REAPER_SHUTDOWN_SECONDS,
        ),
    ]
    if settings.is_queen:
        queen = configs.queen_config(settings)
        specs.append(
            ChildSpec(
                "queen",
                QueenActor.start,
                # her first round that holds the lease asks the reaper for its boot pass
                args=(queen_ports(rt), queen, reaper.boot),
                shutdown=QUEEN_SHUTDOWN_SECONDS,
            )
        )
    if settings.is_queen:
        specs += queen_helpers(rt, settings, forge)
    if runs_bees(settings):
        specs.append(
            ChildSpec(
                "runner",
                lambda: Supervisor(
                    "runner", runner_children(rt, settings, drain), strategy=Strategy.REST_FOR_ONE
                ),
                kind=ChildKind.SUPERVISOR,
            )
        )
    specs.append(
        ChildSpec(
            "drain",
            DrainActor.start,
            args=(rt.work, rt.metrics, rt.names, bridge, drain),
            shutdown=DRAIN_SHUTDOWN_SECONDS,
        )
    )
    return specs


def queen_helpers(
    rt: Runtime, settings: Settings, forge: GitHubForge | None = None
) -> list[ChildSpec]:
    """The Queen's reviewer, job runner (DESIGN 10) and pruner, and with HIVE_FORGE=github the
    forge's loop: started after her, stopped before."""
    reviewer = configs.reviewer_config(settings)
    verdicts = after_verdict(rt.db, settings.publish, rt.names.tell)
    jobs = configs.jobs_config(settings)
    publish = configs.publish_config(settings)

    def merged(issue: int, sha: str) -> None:
        rt.names.tell(QUEEN, IssuesChanged())  # a blocker closed: its dependants may go
        if forge is not None and settings.publish == PublishMode.PUSH:
            # a push tells GitHub nothing: the watch comments the merge and closes the
            # issue, now (a pull request's merge is closed by its job)
            rt.names.tell(FORGE, IssuesChanged())

    steps = forge.steps if forge is not None and settings.publish == PublishMode.GITHUB else None
    # in elsewhere mode an order's ending anywhere wakes the reviewer (NOTIFY)
    listen = rt.url if settings.queen_bees_run_elsewhere else None
    specs = [
        ChildSpec(
            "reviewer",
            ReviewerActor.start,
            args=(
                rt.db,
                rt.checkout,
                rt.metrics,
                rt.names,
                rt.work.add,
                reviewer,
                verdicts,
                listen,
            ),
            shutdown=REVIEWER_SHUTDOWN_SECONDS,
        ),
        ChildSpec(
            "jobs",
            JobRunnerActor.start,
            args=(rt.db, rt.checkout, rt.metrics, rt.names, jobs, publish, merged, steps),
            shutdown=JOBS_SHUTDOWN_SECONDS,
        ),
        ChildSpec(
            "retention",
            RetentionActor.start,
            args=(rt.db, rt.checkout, rt.metrics, rt.names, configs.retention_config(settings)),
            shutdown=RETENTION_SHUTDOWN_SECONDS,
        ),
    ]
    if settings.shaper_agent != AgentKind.OFF:
        shaper = Shaper(
            rt.db,
            rt.checkout,
            rt.metrics,
            settings.shaper_agent,
            settings.shape,
            reviewer,
            edit_remote=forge.repo.edit_issue_body if forge is not None else None,
            holds_lease=lambda: holds_queen_lease(rt.db, settings.runner_name),
            credit_terms=configs.credit_terms(settings),
        )
        specs.insert(
            1,
            ChildSpec(
                "shaper",
                ShaperActor.start,
                args=(rt.names, shaper, reviewer.tick_seconds),
                shutdown=SHAPER_SHUTDOWN_SECONDS,
            ),
        )
    chat = configs.chat(settings)
    if chat is not None:
        room = Room(
            rt.db,
            chat,
            rt.metrics,
            holds_lease=lambda: holds_queen_lease(rt.db, settings.runner_name),
        )
        specs.append(
            ChildSpec(
                "chat", ChatActor.start, args=(room, rt.names), shutdown=CHAT_SHUTDOWN_SECONDS
            )
        )
    if forge is not None:
        work = ForgeWork(forge.intake, forge.watch, lambda: rt.names.tell(QUEEN, IssuesChanged()))
        specs.append(
            ChildSpec(
                "forge",
                ForgeActor.start,
                args=(rt.names, work, forge.poll_seconds),
                shutdown=FORGE_SHUTDOWN_SECONDS,
            )
        )
    return specs


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
