"""Each fault of the plan acted on the world; what it saw is kept in `Seen`.

A killed or SIGTERMed process is replaced at once (a new runner in its slot, a Queen
with her name). A SIGKILL goes to the target slot's runner, or the next one's that runs
agents now. Its agents are found by their working directory (under its workdir) before
the kill, and each one's death is noted as the kernel tells it (a pidfd,
hive/chaos/deaths.py), against the runner's own. A stalled runner gets SIGSTOP
(its agents run on, as in a network partition), stays stopped past its silent window
until the orders it held are claimed by another runner, then SIGCONT. A PostgreSQL
restart is `pg_ctl stop -m fast` and a start.

An aimed fault (--loop) waits from its time for its moment, then strikes at once: a
publish job claimed and moved since the wait began (`_publishing`), or a review begun
since (a new line in the chaos reviewer's log). Past AIM_SECONDS without its moment it
strikes anyway, and its line says it missed.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import psycopg

from hive.chaos import interrupt
from hive.chaos.deaths import Deaths, outlived
from hive.chaos.invariants import OUTLIVE_BOUND_SECONDS, Outliving
from hive.chaos.plan import Fault, FaultKind
from hive.chaos.world import World
from hive.store import embedded, orders
from hive.swarm import Serve, WaitTimeout, processes_under, wait_for

log = logging.getLogger("hive.chaos")

# how long after its silent window a stalled runner stays stopped at most (the reaper's
# pass comes within a quarter of the window, then a round and another runner's claim;
# the rest is slack for a loaded machine)
STALL_SLACK_SECONDS = 10.0
POLL_SECONDS = 0.1
AIM_SECONDS = 60.0
START_SECONDS = 120.0
SERVING = "serve: serving as"  # the line `hive serve` logs once its tree is built
AIM_POLL_SECONDS = 0.02  # a publish job's steps take tens of milliseconds each


@dataclass
class Seen:
    outliving: list[Outliving] = field(default_factory=list)
    acted: list[str] = field(default_factory=list)  # one line per fault, as it happened


def act(world: World, fault: Fault, seen: Seen, began: float) -> None:
    """Do `fault` now; append what happened to `seen`."""
    world.replace_exited()  # a process that died by itself is not this fault's
    at = time.monotonic() - began
    what = _ACTS[fault.kind](world, fault, seen)
    line = f"{at:6.1f} s  {fault.kind.value}: {what}"
    seen.acted.append(line)
    log.info("%s", line)


def _kill_runner(world: World, fault: Fault, seen: Seen) -> str:
    slot, agents = _with_agents(world, fault.target)
    old = world.runners[slot]
    # each death is noted as it happens: a walk of /proc until they are gone would time
    # the walks, seconds each on a loaded machine (hive/chaos/deaths.py)
    deaths = Deaths((old.pid, *agents))
    old.kill()
    world.killed.append(old)
    new = world.start_runner(slot)
    died = deaths.wait_all(OUTLIVE_BOUND_SECONDS * 3)
    runner_died = died.pop(old.pid)
    gone = None if runner_died is None else outlived(died, runner_died)
    seen.outliving.append(Outliving(old.name, agents, gone))
    return f"{old.name} ({len(agents)} agent processes); {new.name} replaces it"


def _with_agents(world: World, target: int) -> tuple[int, tuple[int, ...]]:
    """The target slot, or the next slot whose runner has agent processes now, with
    them (a kill of a runner between turns tells nothing of its agents); the target with
    none when no runner has any."""
    slots = sorted(world.runners)
    at = slots.index(target)
    for slot in slots[at:] + slots[:at]:
        agents = tuple(processes_under(world.workdir(world.runners[slot])))
        if agents:
            return slot, agents
    return target, ()


def _serving(serve: Serve) -> None:
    """Until `serve` logs that it serves, or exits: a SIGTERM in the interpreter's first
    moments, before any of the hive runs, kills it (143), which says nothing of the hive
    (two faults may fall at one moment when an aimed one waited for its own)."""
    with contextlib.suppress(WaitTimeout):
        wait_for(
            lambda: serve.exit_code() is not None or SERVING in serve.log(),
            START_SECONDS,
            f"{serve.name} to serve",
            poll_seconds=POLL_SECONDS,
        )


def _term_runner(world: World, fault: Fault, seen: Seen) -> str:
    old = world.runners[fault.target]
    _serving(old)
    old.send(signal.SIGTERM)
    world.signalled.append(old)
    new = world.start_runner(fault.target)
    return f"{old.name} drains; {new.name} replaces it"


def _kill_queen(world: World, fault: Fault, seen: Seen) -> str:
    old = world.queen
    assert old is not None
    old.kill()
    world.killed.append(old)
    new = world.start_queen()
    return f"{old.name}; {new.name} replaces her"


def _term_queen(world: World, fault: Fault, seen: Seen) -> str:
    old = world.queen
    assert old is not None
    _serving(old)
    old.send(signal.SIGTERM)
    world.signalled.append(old)
    new = world.start_queen()
    return f"{old.name} drains; {new.name} replaces her"


def _restart_postgres(world: World, fault: Fault, seen: Seen) -> str:
    began = time.monotonic()
    with interrupt.held():  # a server half started could not be stopped
        embedded.stop(world.pgdata)
        url = embedded.start(world.pgdata)
    assert url == world.url, f"the server came back at {url}, not {world.url}"
    return f"down and up again in {time.monotonic() - began:.1f} s"


def _stall_runner(world: World, fault: Fault, seen: Seen) -> str:
    """Stops the target slot's runner, or the next slot's that holds orders now (a stall
    of an idle runner tests nothing)."""
    slots = sorted(world.runners)
    at = slots.index(fault.target)
    for slot in slots[at:] + slots[:at]:
        serve = world.runners[slot]
        held = _held(world, serve.name)
        if held:
            break
    else:
        serve, held = world.runners[fault.target], set()
    os.kill(serve.pid, signal.SIGSTOP)
    stopped = time.monotonic()
    window = world.shape.silent_minutes * 60
    pause = threading.Event()
    still: set[int] = set()
    try:
        pause.wait(window)  # the fault itself: this long without a heartbeat, at least
        if held:
            # a partition outlasts the reap: the stall goes on until the orders it held
            # were claimed again elsewhere (its turns may still run: the overlap check)
            wait_for(
                lambda: _taken_elsewhere(world, held, serve.name),
                STALL_SLACK_SECONDS,
                "a stalled runner's orders to be taken by another runner",
                poll_seconds=POLL_SECONDS,
            )
        else:
            pause.wait(STALL_SLACK_SECONDS / 4)
    except WaitTimeout:
        pass
    finally:
        still = _held(world, serve.name)
        os.kill(serve.pid, signal.SIGCONT)
    return (
        f"{serve.name} stopped {time.monotonic() - stopped:.1f} s holding {sorted(held)}, "
        f"{sorted(still)} not reaped at SIGCONT"
    )


def _kill_queen_publishing(world: World, fault: Fault, seen: Seen) -> str:
    moment = _aim(world, _publish_moment(world), "a publish job")
    return f"{moment}: {_kill_queen(world, fault, seen)}"


def _kill_queen_reviewing(world: World, fault: Fault, seen: Seen) -> str:
    log_file = world.ctl / "reviews.log"
    size = log_file.stat().st_size if log_file.exists() else 0

    def begun() -> str | None:
        grown = log_file.read_bytes()[size:] if log_file.exists() else b""
        lines = grown.decode(errors="replace").splitlines()
        return f"#{lines[0].split()[1]}'s review ({lines[0].split()[-1]})" if lines else None

    moment = _aim(world, begun, "a review")
    return f"{moment}: {_kill_queen(world, fault, seen)}"


def _restart_postgres_publishing(world: World, fault: Fault, seen: Seen) -> str:
    moment = _aim(world, _publish_moment(world), "a publish job")
    return f"{moment}: {_restart_postgres(world, fault, seen)}"


def _aim(world: World, moment: Callable[[], str | None], what: str) -> str:
    """Wait for `moment` to name one; past AIM_SECONDS, say it was missed."""
    found: list[str] = []

    def came() -> bool:
        said = moment()
        if said is not None:
            found.append(said)
        return said is not None

    try:
        wait_for(came, AIM_SECONDS, what, poll_seconds=AIM_POLL_SECONDS)
    except WaitTimeout:
        return f"missed: no {what} in {AIM_SECONDS:.0f} s"
    return found[-1]


def _publish_moment(world: World) -> Callable[[], str | None]:
    """A publish job claimed now whose claim or step moved since this was asked for."""
    since = time.time()

    def publishing() -> str | None:
        try:
            with world.connect() as db:
                row = db.execute(
                    "SELECT issue, step FROM hive.queen_job WHERE kind = 'publish'"
                    " AND state = 'ready' AND claimed_by IS NOT NULL"
                    " AND updated_at >= to_timestamp(%s) ORDER BY updated_at DESC LIMIT 1",
                    (since,),
                ).fetchone()
        except psycopg.Error:
            return None
        return None if row is None else f"#{row[0]}'s publish at {row[1]}"

    return publishing


def _taken_elsewhere(world: World, issues: set[int], runner: str) -> bool:
    """Each of `issues` has an order claimed by another runner than `runner`."""
    try:
        with world.connect() as db:
            found = [orders.get(db, issue) for issue in sorted(issues)]
    except psycopg.Error:
        return False
    return all(o is not None and o.claimed_by not in (None, runner) for o in found)


def _held(world: World, runner: str) -> set[int]:
    """The issues `runner` holds unfinished orders of (empty when the store is away)."""
    try:
        with world.connect() as db:
            held = orders.listing(db, unfinished_only=True)
    except psycopg.Error:
        return set()
    return {o.issue for o in held if o.claimed_by == runner}


_ACTS = {
    FaultKind.KILL_RUNNER: _kill_runner,
    FaultKind.TERM_RUNNER: _term_runner,
    FaultKind.KILL_QUEEN: _kill_queen,
    FaultKind.TERM_QUEEN: _term_queen,
    FaultKind.RESTART_POSTGRES: _restart_postgres,
    FaultKind.STALL_RUNNER: _stall_runner,
    FaultKind.KILL_QUEEN_PUBLISHING: _kill_queen_publishing,
    FaultKind.KILL_QUEEN_REVIEWING: _kill_queen_reviewing,
    FaultKind.RESTART_POSTGRES_PUBLISHING: _restart_postgres_publishing,
}
