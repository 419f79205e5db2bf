"""One chaos run, from an empty directory to the table: build the world, start a Queen
and the runners, act each fault of the plan at its time, wait until every order has
finished (or the deadline), SIGTERM every process and wait for its exit, then read what
was left and check the invariants. Whatever happens, nothing is left running: every
process under the run's directory is killed and the server stopped; a SIGTERM or SIGINT
(hive/chaos/interrupt.py) ends the run there too."""

from __future__ import annotations

import logging
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg

from hive.chaos import evidence, interrupt
from hive.chaos.agent import merges
from hive.chaos.deaths import Deaths, outlived
from hive.chaos.dwell import Dwell, place_of, sat_within_bounds
from hive.chaos.faults import SERVING, START_SECONDS, Seen, act
from hive.chaos.github import SMALL_FAULT_SECONDS, GitHubSide, small_shape
from hive.chaos.invariants import (
    OUTLIVE_BOUND_SECONDS,
    Check,
    Outliving,
    ended_once,
    lost_bundles,
    named_issues,
    outliving,
    outside_boundaries,
    overlapping_turns,
    sigterm_exits,
    sold_once,
)
from hive.chaos.loop import kept_pushes, merged_once, on_main_once, review_counts
from hive.chaos.person import Person
from hive.chaos.plan import Plan, Shape, looped, make_plan
from hive.chaos.priority import labels, went_in_order
from hive.chaos.world import ACCOUNT, World, issue_file
from hive.rules.outcome_codes import OutcomeCode
from hive.services import history
from hive.store import orders
from hive.swarm import WaitTimeout, kill_everything_under, processes_under, wait_for

log = logging.getLogger("hive.chaos")

POLL_SECONDS = 0.5
FINISH_CAP_SECONDS = 6 * 3600.0  # however it moves, a run ends within this
HISTORY_LINES = 40  # of each issue a violation names
SAMPLE_SECONDS = 1.0  # --loop: how often each issue's place is read
# a SIGTERMed process drains its bees (the drain's cap, the hand-back) and exits
EXIT_SECONDS = 90.0


@dataclass(frozen=True)
class Result:
    plan: Plan
    seconds: float
    checks: tuple[Check, ...]
    acted: tuple[str, ...]
    unasked: tuple[tuple[str, int, str], ...]  # processes that exited by themselves
    # the history (`hive why`, oldest first) of each issue a violation names first
    histories: dict[int, tuple[str, ...]] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.checks)


def run(
    root: Path,
    shape: Shape,
    seed: int,
    *,
    finish_seconds: float,
    say: Callable[[str], None] = lambda line: None,
    loop: bool = False,
    forge: str = "local",
) -> Result:
    """The whole run under `root` (an empty directory); after the last fault every
    order finishes (with `loop`, every issue is merged or escalated), or the run stops
    waiting once none has gone through for `finish_seconds`. `forge` github, with `loop`:
    against the fake GitHub, hive/chaos/github.py."""
    shaped = looped(shape) if loop else shape
    side = None
    if forge == "github" and loop:
        big = shape.fault_seconds > SMALL_FAULT_SECONDS
        side = GitHubSide(list(range(1, shape.orders + 1)), seed, shape.fault_seconds, big=big)
        shaped = shaped if big else small_shape(shaped)
    plan = make_plan(shaped, seed)
    world = World(root, shape, loop=loop, forge=side)
    seen = Seen()
    started = began = time.monotonic()
    person: Person | None = None
    stop = threading.Event()
    # without --loop nothing samples or pushes: a finished thread, so each join returns
    pushing = sampling = threading.Thread(target=lambda: None)
    pushing.start()
    dwell = Dwell()
    try:
        world.build(plan)
        say(f"{shape.orders} orders, {shape.runners} runners, {len(plan.faults)} faults")
        world.start_queen()
        for slot in range(shape.runners):
            world.start_runner(slot)
        _wait_serving(world)
        began = time.monotonic()  # the faults' clock starts once the swarm is up
        world.serve_seconds = began - started
        say(f"the swarm serves after {began - started:.1f} s; faults begin")
        if side is not None:
            side.start(began)
        if loop:
            sampling = threading.Thread(
                target=_sample, args=(world, dwell, began, stop), name="dwell", daemon=True
            )
            sampling.start()
            person = Person(world.root, world.repo_url, issue_file)
            pushing = threading.Thread(
                target=_push_now_and_then,
                args=(world, person, plan, began, seen, say, stop),
                name="person",
                daemon=True,
            )
            pushing.start()
        pause = threading.Event()
        for fault in plan.faults:
            pause.wait(max(0.0, began + fault.at_seconds - time.monotonic()))  # the schedule
            act(world, fault, seen, began)
            say(seen.acted[-1])
        pushing.join()  # the person's last push is within the fault window
        if side is not None:
            side.faults_struck()
        _wait_finished(world, plan, finish_seconds, _not_ended if loop else _not_finished)
        if side is not None:
            side.stop()
            for line in side.lines:
                say(line)
            seen.acted.extend(side.lines)
        stop.set()
        sampling.join()
        say(f"{time.monotonic() - began:.1f} s: stopping every process")
        exits = _stop_all(world)
        seen.outliving.append(_left_at_the_end(world))
        checks = _check(world, plan, seen, exits, person, dwell)
        histories = _histories(world, named_issues(checks))
        if side is not None:  # what GitHub and the person did to each
            histories = {n: (*said, *side.said_about(n)) for n, said in histories.items()}
    finally:
        with interrupt.held():  # a SIGTERM now waits until everything is stopped
            stop.set()
            if side is not None:
                side.close()
            kill_everything_under(world.procs, world.every_serve())
            world.remove_server()
    return Result(
        plan,
        time.monotonic() - started,
        checks,
        tuple(seen.acted),
        tuple(world.unasked),
        histories,
    )


def _push_now_and_then(
    world: World,
    person: Person,
    plan: Plan,
    began: float,
    seen: Seen,
    say: Callable[[str], None],
    stop: threading.Event,
) -> None:
    """The person's pushes, each at its time; a push that fails is said and skipped."""
    for k, push in enumerate(plan.pushes, start=1):
        if stop.wait(max(0.0, began + push.at_seconds - time.monotonic())):
            return
        try:
            line = person.push(push, k, lambda: _in_flight(world))
        except Exception as err:  # a person's git failing is said, not fatal to the run
            line = f"a person's push {k} failed: {str(err).splitlines()[0] if str(err) else err!r}"
        line = f"{time.monotonic() - began:6.1f} s  {line}"
        seen.acted.append(line)
        say(line)


def _sample(world: World, dwell: Dwell, began: float, stop: threading.Event) -> None:
    """Each issue's place, every SAMPLE_SECONDS until `stop` (none while the store is away)."""
    while not stop.wait(SAMPLE_SECONDS):
        try:
            with world.connect() as db:
                rows = db.execute(
                    "SELECT i.number, i.state = 'closed', d.merged_sha IS NOT NULL,"
                    " hive.order_state(d.started, d.finished_at, d.outcome_code, d.review_state),"
                    " d.queued_at IS NOT NULL AND d.claimed_by IS NULL"
                    " FROM hive.queen_issue AS i"
                    " LEFT JOIN hive.queen_dispatch AS d ON d.issue = i.number"
                ).fetchall()
        except psycopg.Error:
            continue
        places = {
            n: place_of(state, closed, bool(merged), bool(queued))
            for n, closed, merged, state, queued in rows
        }
        dwell.see(time.monotonic() - began, places)


def _in_flight(world: World) -> list[int]:
    """The issues whose work is not merged yet, those whose turn finished first, then
    those whose turn runs (empty when the store is away): each one's branch was cut
    before the person's push, so its merge conflicts with an edit of its file."""
    try:
        with world.connect() as db:
            rows = db.execute(
                "SELECT issue FROM hive.queen_dispatch"
                " WHERE merged_sha IS NULL AND (outcome_code = 'finished' OR outcome IS NULL)"
                " ORDER BY outcome IS NULL, issue"
            ).fetchall()
    except psycopg.Error:
        return []
    return [row[0] for row in rows]


def _histories(world: World, issues: list[int]) -> dict[int, tuple[str, ...]]:
    """Each issue's sentences, oldest first, as `hive why` tells them."""
    found = {}
    with world.connect() as db:
        for n in issues:
            said = reversed(history.why(db, n, limit=HISTORY_LINES))
            found[n] = tuple(f"{s.at:%H:%M:%S} {s.text}" for s in said)
    return found


def _wait_serving(world: World) -> None:
    """Until each process has logged that it serves (its tree runs) or has exited."""
    try:
        wait_for(
            lambda: all(
                serve.exit_code() is not None or SERVING in serve.log() for serve in world.live()
            ),
            START_SECONDS,
            "every process to serve",
            poll_seconds=POLL_SECONDS,
        )
    except WaitTimeout as err:
        log.warning("%s", err)


def _not_finished(db: psycopg.Connection[Any], issues: set[int]) -> int:
    """How many issues have no finished order yet."""
    finished = {o.issue for o in orders.listing(db) if o.outcome_code is OutcomeCode.FINISHED}
    return len(issues - finished)


def _not_ended(db: psycopg.Connection[Any], issues: set[int]) -> int:
    """How many issues are neither merged and closed nor escalated (the loop's end)."""
    ends = evidence.issue_ends(db, sorted(issues))
    return sum(1 for e in ends if not (e.closed and e.merged_sha) and e.escalated_note is None)


def _wait_finished(
    world: World,
    plan: Plan,
    seconds: float,
    left: Callable[[psycopg.Connection[Any], set[int]], int],
) -> None:
    """Until `left` says no issue is left, while one goes through at least every
    `seconds` (a big run on a loaded machine takes as long as it takes; a run where
    nothing moves for that long is stuck, and the checks say which issues), and never
    past FINISH_CAP_SECONDS."""
    issues = set(plan.ticks)
    fewest = [len(issues), time.monotonic()]  # the fewest left seen, and since when

    def all_through() -> bool:
        world.replace_exited()
        try:
            with world.connect() as db:
                now_left = left(db, issues)
        except psycopg.Error:
            return False  # the server restarts: look again
        if now_left < fewest[0]:
            fewest[:] = [now_left, time.monotonic()]
        elif time.monotonic() - fewest[1] > seconds:
            raise WaitTimeout(f"{now_left} issues did not move for {seconds:.0f} s")
        return now_left == 0

    try:
        wait_for(all_through, FINISH_CAP_SECONDS, "every issue", poll_seconds=POLL_SECONDS)
    except WaitTimeout as err:
        log.warning("%s", err)


def _stop_all(world: World) -> list[tuple[str, int | None]]:
    """SIGTERM the live processes; every SIGTERMed process's exit code (None: none)."""
    world.replace_exited()
    # a replacement started a moment ago is let reach its own code first: a SIGTERM in
    # the interpreter's first moments, before any of the hive runs, kills it (143)
    _wait_serving(world)
    for serve in world.live():
        serve.send(signal.SIGTERM)
        world.signalled.append(serve)
    exits: list[tuple[str, int | None]] = []
    for serve in world.signalled:
        try:
            exits.append((serve.name, serve.wait(EXIT_SECONDS)))
        except WaitTimeout:
            exits.append((serve.name, None))
    return exits


def _left_at_the_end(world: World) -> Outliving:
    """Agents still alive once every runner exited, and how long they took to go."""
    ended = time.monotonic()
    left = tuple(processes_under(world.procs))
    deaths = Deaths(left)  # each death noted as it comes (hive/chaos/deaths.py)
    gone = outlived(deaths.wait_all(OUTLIVE_BOUND_SECONDS * 3), ended)
    return Outliving("every runner, at the end", left, gone)


def _check(
    world: World,
    plan: Plan,
    seen: Seen,
    exits: list[tuple[str, int | None]],
    person: Person | None = None,
    dwell: Dwell | None = None,
) -> tuple[Check, ...]:
    events = evidence.turn_events(world.turns_log)
    with world.connect() as db:
        outcomes = evidence.attempts(db, plan.ticks)
        finished = evidence.finished_issues(outcomes)
        scratch = world.root / "verify"
        scratch.mkdir()
        stored = evidence.check_bundles(db, finished, events, world.upstream, scratch)
        sold = sold_once(evidence.conversations(db, plan.ticks), evidence.ledger(db, ACCOUNT))
        ends = evidence.issue_ends(db, sorted(plan.ticks)) if world.loop else []
        first_dispatches = evidence.first_dispatches(db)
    first: tuple[Check, ...] = (ended_once(outcomes),)
    if world.loop:
        merged = {e.issue: e.merged_sha for e in ends if e.closed and e.merged_sha}
        on_main, lines = evidence.main_changes(world.upstream, merged)
        log = world.ctl / "reviews.log"
        back, crashed, hung = review_counts(log.read_text() if log.exists() else "")
        red = "a check red once" if (world.ctl / "check-red").exists() else "no check red"
        way = f" ({back} reviews sent back, {crashed} crashed, {hung} hung, {red})"
        pushes = evidence.person_changes(world.upstream, person.pushed if person else ())
        after_conflict = merges(world.turns_log.read_text(errors="replace"))
        first = (
            merged_once(ends, way),
            on_main_once(merged, on_main, lines),
            kept_pushes(pushes, after_conflict),
            went_in_order(*labels(sorted(plan.ticks), plan.seed), first_dispatches),
            sat_within_bounds(dwell or Dwell(), world.dwell_bounds()),
        )
    if world.forge is not None:
        # GitHub's issues come by the poll, newest first, a page at a time: the Queen
        # may start one before an older one is in, so the order is not judged here
        with world.connect() as db:
            judged = tuple(c for c in first if not c.name.startswith("who goes next"))
            first = (*judged, *world.forge.checks(db, ends))
    return (
        *first,
        overlapping_turns(events),
        lost_bundles(stored),
        outside_boundaries(stored),
        outliving(seen.outliving),
        sigterm_exits(exits),
        sold,
    )
