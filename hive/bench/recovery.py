"""recovery: a runner killed with SIGKILL mid-turn; time until its order is free and re-claimed.

Real `hive serve` processes on a scratch database (hive/bench/processes.py): a Queen that
queues (and runs the stall reaper) with `HIVE_RUNNER_SILENT_MINUTES` set to `--silent`
seconds, a runner that claims a held turn, and a second runner, up and idle, to take it
over. The first runner gets SIGKILL; `free_s` is the time until the order is ended
`reaped: runner silent` (free again), `reclaimed_s` until the second runner has claimed
the next attempt. The ceiling is the configured silent window: the order cannot be free
sooner, and `free_ratio` = free_s / silent window (the stall reaper looks four times per
window, so up to 1.25 is on time). `duplicate_turns` counts turns started beyond one per
attempt (must be 0). Each run is a new issue and a new pair of runners; figures are
medians over `--runs`.
"""

from __future__ import annotations

import argparse
import signal
import time
from typing import Any

from hive.bench.arguments import seconds, whole
from hive.bench.processes import START_SECONDS, LocalHive, local_hive, median
from hive.errors import HiveError
from hive.rules.outcome_codes import OutcomeCode
from hive.settings import Settings

REAPED = OutcomeCode.REAPED_RUNNER_SILENT
SILENT_RUNS_FOR_TIMEOUT = 10  # how many silent windows the bench waits for a reap


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--runs", type=whole(1, 20), default=3, help="kills to measure (3)")
    parser.add_argument(
        "--silent", type=seconds(0.5, 600), default=3.0, help="HIVE_RUNNER_SILENT_MINUTES, in s (3)"
    )
    parser.add_argument("--keep", action="store_true", help="keep the directory and its logs")


def run(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    silent_minutes = f"{args.silent / 60:.6f}"
    with local_hive(settings, keep=args.keep) as hive:
        hive.queen(HIVE_RUNNER_SILENT_MINUTES=silent_minutes)
        runs = [_one(hive, i, silent_minutes, args.silent) for i in range(args.runs)]
    free = median([r["free_s"] for r in runs])
    return {
        "runs": args.runs,
        "silent_window_s": args.silent,
        "free_s": free,
        "free_max_s": max(r["free_s"] for r in runs),
        "free_ratio": free / args.silent,
        "reclaimed_s": median([r["reclaimed_s"] for r in runs]),
        "finished_after": sum(r["finished"] for r in runs),
        "duplicate_turns": sum(r["duplicates"] for r in runs),
    }


def _one(hive: LocalHive, run: int, silent_minutes: str, silent_seconds: float) -> dict[str, Any]:
    clocks = {"HIVE_RUNNER_SILENT_MINUTES": silent_minutes}
    victim = hive.start(f"victim-{run}", "runner", **clocks)
    hive.wait(lambda: hive.registered(victim.name), START_SECONDS, f"{victim.name} registers")
    (n,) = hive.new_issues(1)
    hive.wait(
        lambda: hive.turns(n) and hive.claimed_by(n, victim.name),
        START_SECONDS,
        f"issue {n}'s turn starts on {victim.name}",
    )
    # the rescuer is up and idle before the kill, so what is measured is the reaper
    rescuer = hive.start(f"rescuer-{run}", "runner", **clocks)
    hive.wait(lambda: hive.registered(rescuer.name), START_SECONDS, f"{rescuer.name} registers")

    killed = victim.send(signal.SIGKILL)
    timeout = START_SECONDS + SILENT_RUNS_FOR_TIMEOUT * silent_seconds
    hive.wait(lambda: any(c is REAPED for c in hive.outcomes(n)), timeout, f"issue {n} freed")
    freed = time.monotonic()
    hive.wait(lambda: hive.claimed_by(n, rescuer.name), timeout, f"{rescuer.name} claims #{n}")
    reclaimed = time.monotonic()

    hive.release(n)
    hive.wait(lambda: hive.ended(n), START_SECONDS, f"issue {n} ends on {rescuer.name}")
    hive.close(n)
    done = hive.ended(n)
    finished = int(done is not None and done.outcome_code is OutcomeCode.FINISHED)
    attempts = done.attempt if done is not None else 0
    rescuer.send(signal.SIGTERM)
    code = hive.exit_code(rescuer, START_SECONDS)
    if code != 0:
        raise HiveError(f"bench: {rescuer.name} exited {code} (log {rescuer.log_path})")
    return {
        "free_s": freed - killed,
        "reclaimed_s": reclaimed - killed,
        "finished": finished,
        # each attempt starts exactly one turn: the killed one, then the rescuer's
        "duplicates": max(0, hive.turns(n) - attempts),
    }
