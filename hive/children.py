"""The tree's children by role (DESIGN 3): the child spec of every actor `hive.tree.build`
starts, each with its own ports and config, and the grace each one has to stop.

`hive_children` is the root's list for the process's roles; `runner_children` the runner
supervisor's (the bee host, the bee pool, the claimer, the bee's bots' turns);
`queen_helpers` the Queen's reviewer, job runner, pruner, shaper, chat and forge.
"""

from __future__ import annotations

from hive import configs
from hive.actors.bee.actor import BeeActor
from hive.actors.bee.host import HostActor
from hive.actors.chat import ChatActor
from hive.actors.chat_turns import POLL_SECONDS as CHAT_TURNS_POLL_SECONDS
from hive.actors.chat_turns import ChatTurnsActor
from hive.actors.drain import DrainActor, DrainConfig
from hive.actors.forge import ForgeActor, ForgeWork
from hive.actors.jobrunner import JobRunnerActor
from hive.actors.messages import FORGE, QUEEN, IssuesChanged
from hive.actors.queen.queen import QueenActor
from hive.actors.reaper.reaper import ReaperActor
from hive.actors.retention import RetentionActor
from hive.actors.reviewer.reviewer import ReviewerActor, holds_queen_lease
from hive.actors.reviewer.verdicts import after_verdict
from hive.actors.runner import RunnerActor
from hive.actors.service import ServiceActor
from hive.actors.shaper import Shaper, ShaperActor
from hive.chat.room import Room
from hive.chat.turns import ChatTurns
from hive.forge.github.wiring import GitHubForge
from hive.http import ExportServer
from hive.rules.drain import HAND_BACK_SECONDS
from hive.rules.modes import AgentKind, PublishMode
from hive.rules.spend import Cost
from hive.runtime import Runtime, claimer_ports, queen_ports, reaper_ports
from hive.settings import Settings
from supervisors import ChildKind, ChildSpec, Pool, Restart, SignalBridge, Strategy, Supervisor

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


def bee_shutdown_seconds(drain: DrainConfig) -> float:
    """The drain's hold: a bee may run to the cap, then its hand-back has HAND_BACK_SECONDS.
    A bee stopped by the tree outside a drain is handed back within the latter."""
    return float(drain.cap_seconds + HAND_BACK_SECONDS)


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
        work = ChatTurns(rt.db, rt.checkout, turns, lambda usage: _usd(cost(usage)), rt.metrics)
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
