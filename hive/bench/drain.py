"""drain: SIGTERM to exit with no bees, with bees ending before the cap, and at the cap.

Real `hive serve` processes on a scratch database (hive/bench/processes.py), a Queen that
queues and one runner per phase:

- no bees: a runner, and a Queen, each SIGTERMed once it is up; seconds to exit, against
  issue 6's bound of 2 s.
- bees ending before the cap: a runner with `--bees` held turns and a cap of 60 s gets
  SIGTERM; the turns are let go `--turn-left` seconds later. The drain should last the
  turns and little more: `held_after_last_end_s` is the time from the last turn's end to
  the process's exit (ending, salvage, bundle, the tree's stop).
- at the cap: a runner with `--bees` turns that never end and a cap of `--cap` seconds
  gets SIGTERM. `handback_s` is from the cap to the last order ended `handed back`,
  against the card's HAND_BACK_SECONDS (20); `cap_exit_s` is SIGTERM to exit, against the
  card's bound cap + HAND_BACK_SECONDS + EXIT_SECONDS.
Each phase runs `--runs` times; the figures are medians.
"""

from __future__ import annotations

import argparse
import signal
import threading
import time
from typing import Any

from hive.bench.arguments import whole
from hive.bench.processes import START_SECONDS, LocalHive, local_hive, median
from hive.errors import HiveError
from hive.rules.drain import EXIT_SECONDS, HAND_BACK_SECONDS
from hive.rules.outcome_codes import OutcomeCode
from hive.settings import Settings
from hive.store import reports
from hive.swarm import Serve

NO_BEES_BOUND_SECONDS = 2.0  # issue 6: SIGTERM with no bees exits in under 2 s
HELD_CAP_SECONDS = 60
EXIT_WAIT_SECONDS = 120.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--runs", type=whole(1, 20), default=3, help="runs of each phase (3)")
    parser.add_argument("--bees", type=whole(1, 16), default=2, help="bees in one runner (2)")
    parser.add_argument("--cap", type=whole(0, 600), default=2, help="the drain's cap, s (2)")
    parser.add_argument(
        "--turn-left", type=float, default=1.0, help="s a held turn runs after SIGTERM (1)"
    )
    parser.add_argument("--keep", action="store_true", help="keep the directory and its logs")


def run(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    if not 0 < args.turn_left < HELD_CAP_SECONDS:
        raise HiveError(
            f"--turn-left {args.turn_left} must be above 0 and under {HELD_CAP_SECONDS}"
        )
    with local_hive(settings, keep=args.keep) as hive:
        runner_exits = [_no_bees(hive, f"idle-runner-{i}", "runner") for i in range(args.runs)]
        queen_exits = [_no_bees(hive, f"idle-queen-{i}", "queen") for i in range(args.runs)]
        hive.queen()
        held = [_held(hive, i, args.bees, args.turn_left) for i in range(args.runs)]
        capped = [_capped(hive, i, args.bees, args.cap) for i in range(args.runs)]
    no_bees = max(median(runner_exits), median(queen_exits))
    handback = median([c["handback_s"] for c in capped])
    cap_exit = median([c["exit_s"] for c in capped])
    cap_bound = args.cap + HAND_BACK_SECONDS + EXIT_SECONDS
    return {
        "runs": args.runs,
        "no_bees_runner_exit_s": median(runner_exits),
        "no_bees_queen_exit_s": median(queen_exits),
        "no_bees_bound_s": NO_BEES_BOUND_SECONDS,
        "no_bees_ratio": no_bees / NO_BEES_BOUND_SECONDS,
        "held_bees": args.bees,
        "held_turn_left_s": args.turn_left,
        "held_drain_s": median([h["drain_s"] for h in held]),
        "held_after_last_end_s": median([h["after_end_s"] for h in held]),
        "held_drain_ratio": median([h["drain_s"] for h in held]) / args.turn_left,
        "held_finished": sum(h["finished"] for h in held),
        "cap_s": args.cap,
        "handback_bees": args.bees,
        "handback_s": handback,
        "handback_bound_s": HAND_BACK_SECONDS,
        "handback_ratio": handback / HAND_BACK_SECONDS,
        "handed_back": sum(c["handed_back"] for c in capped),
        "cap_exit_s": cap_exit,
        "cap_exit_bound_s": cap_bound,
        "cap_exit_ratio": cap_exit / cap_bound,
    }


def _no_bees(hive: LocalHive, name: str, role: str) -> float:
    """Seconds from SIGTERM to exit for a process with nothing to hold."""
    last = reports.latest(hive.db, 1)
    before = last[0].id if last else 0
    serve = hive.start(name, role)
    if role == "runner":
        hive.wait(lambda: hive.registered(name), START_SECONDS, f"{name} registers")
    else:
        # up: it holds the Queen lease (no other Queen runs now) and has made a round
        hive.wait(
            lambda: any(r.id > before for r in reports.latest(hive.db, 1)),
            START_SECONDS,
            f"{name}'s first round",
        )
    sent = serve.send(signal.SIGTERM)
    return _exited(hive, serve) - sent


def _exited(hive: LocalHive, serve: Serve) -> float:
    """Wait for `serve` to exit after its SIGTERM; the monotonic time it did. An exit
    other than 0 fails the bench."""
    code = hive.exit_code(serve, EXIT_WAIT_SECONDS)
    exited = time.monotonic()
    if code != 0:
        raise HiveError(f"bench: {serve.name} exited {code} after SIGTERM (log {serve.log_path})")
    return exited


def _busy_runner(hive: LocalHive, name: str, bees: int, cap_seconds: int) -> tuple[Any, list[int]]:
    """A runner with `bees` held turns running, ready for its SIGTERM."""
    serve = hive.start(
        name, "runner", HIVE_RUNNER_SLOTS=str(bees), HIVE_RUNNER_DRAIN_SECONDS=str(cap_seconds)
    )
    numbers = hive.new_issues(bees)
    hive.wait(
        lambda: all(hive.turns(n) and hive.claimed_by(n, name) for n in numbers),
        START_SECONDS,
        f"{bees} turns start on {name}",
    )
    return serve, numbers


def _held(hive: LocalHive, run: int, bees: int, turn_left: float) -> dict[str, Any]:
    serve, numbers = _busy_runner(hive, f"held-{run}", bees, HELD_CAP_SECONDS)
    sent = serve.send(signal.SIGTERM)
    threading.Event().wait(turn_left)  # the workload: the turns still have this long to go
    released = time.monotonic()
    hive.release(*numbers)
    exited = _exited(hive, serve)
    finished = sum(
        1 for n in numbers if (o := hive.ended(n)) and o.outcome_code is OutcomeCode.FINISHED
    )
    hive.close(*numbers)
    return {"drain_s": exited - sent, "after_end_s": exited - released, "finished": finished}


def _capped(hive: LocalHive, run: int, bees: int, cap_seconds: int) -> dict[str, Any]:
    serve, numbers = _busy_runner(hive, f"capped-{run}", bees, cap_seconds)
    hive.close(*numbers)  # once handed back they are free: no round may queue them again
    sent = serve.send(signal.SIGTERM)
    deadline = cap_seconds + HAND_BACK_SECONDS + EXIT_SECONDS
    hive.wait(lambda: all(hive.ended(n) for n in numbers), deadline, "the hand-backs")
    landed = time.monotonic()
    exited = _exited(hive, serve)
    handed = sum(
        1 for n in numbers if (o := hive.ended(n)) and o.outcome_code is OutcomeCode.HANDED_BACK
    )
    hive.release(*numbers)
    return {
        "handback_s": landed - sent - cap_seconds,
        "exit_s": exited - sent,
        "handed_back": handed,
    }
