"""`hive chaos [--size small|big] [--seed N] [--orders N] [--runners N] [--minutes M]
[--dir D] [--loop] [--json]`: a Queen and runners as real processes on a private embedded
PostgreSQL, the orders of a `command:` agent of random length, and seeded faults
(SIGKILL and SIGTERM of runners and of the Queen, PostgreSQL restarts, a runner stalled
past its silent window);
then the invariants as a table (hive/chaos). The seed is printed first: the same seed
replays the same orders and faults. Exit 0 when every invariant holds, 1 when one broke.
With --loop the issues carry a criterion and a priority label and go on through a
`command:` reviewer that sends back, crashes and hangs past its bound (seeded), a check
red once and publish by push into the repository's main over git:// (`git daemon`),
while a person pushes to main now and then and faults strike a Queen mid-publish and
mid-review and PostgreSQL mid-publish; four invariants more: every issue merged once or
escalated with a sentence, main holds each change once, main keeps every push of the
person, and the Queen chose in priority order (ageing included). With --forge github
(the loop implied) the same runs against the fake GitHub of the hive's tests, with
GitHub's failures injected (hive/chaos/github.py) and four invariants more. With --json the
invariants are one JSON object on stdout (`{"invariants": {name: {"ok", "measured",
"violations"}}, "seed": N, ...}`) and every other line goes to stderr.

A SIGTERM or SIGINT stops the run: every process it started (the Queen, the runners and
their agents, git daemon, the fake GitHub, its PostgreSQL) is stopped, one line says so,
and it exits 128 + the signal's number (143, 130).
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import time
from dataclasses import replace
from pathlib import Path

from hive.chaos import interrupt
from hive.chaos.invariants import as_json, table
from hive.chaos.plan import big, small
from hive.chaos.run import run as run_chaos
from hive.errors import HiveError

MARKER = ".hive-chaos"  # a directory holding it is a chaos run's own, safe to clear
# once the faults are over, how long the run waits for any issue to go through before it
# calls the rest stuck (two failed attempts in a row wait 60 s: hive/rules/retry.py)
FINISH_SECONDS = {"small": 90.0, "big": 600.0}
# --loop: reviews, a crashed review's 30 s pause, checks and pushes come after the bee
LOOP_MORE_SECONDS = 120.0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "chaos",
        help="a run under random faults, then its invariants as a table",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--size",
        choices=("small", "big"),
        default="big",
        help="small: one fault of each kind (make test); big: many, two restarts (big)",
    )
    parser.add_argument("--seed", type=_count(0, 2**63 - 1, "seed"), help="default: random")
    parser.add_argument("--orders", type=_count(1, 2000, "number of orders"))
    parser.add_argument("--runners", type=_count(1, 16, "number of runners"))
    parser.add_argument(
        "--minutes", type=_minutes, help="the window the faults fall in (big only; 5)"
    )
    parser.add_argument(
        "--dir", type=Path, default=Path(".hive/chaos"), help="where it works (.hive/chaos)"
    )
    parser.add_argument(
        "--loop",
        action="store_true",
        help="the whole loop: criteria and priorities, a reviewer that sends back, crashes "
        "and hangs, a check red once, publish by push over git://, a person pushing too, "
        "faults aimed at a publish and a review; every issue merged once or escalated",
    )
    parser.add_argument(
        "--forge",
        choices=("local", "github"),
        default="local",
        help="github: the loop against the fake GitHub on 127.0.0.1, with its failures "
        "injected (5xx, a secondary rate limit, timeouts, webhooks twice and out of order, "
        "pull requests merged, closed or headless by a person, a check that never reports)",
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help="the invariants as one JSON object on stdout (the rest on stderr)",
    )
    parser.set_defaults(func=run)


def _count(low: int, high: int, what: str) -> argparse._ActionType:
    def parse(raw: str) -> int:
        if not raw.isascii() or not raw.isdigit() or not low <= int(raw) <= high:
            raise argparse.ArgumentTypeError(f"{raw!r} is not a {what} from {low} to {high}")
        return int(raw)

    return parse


def _minutes(raw: str) -> float:
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not raw.isascii() or not 0.5 <= value <= 120:
        raise argparse.ArgumentTypeError(f"{raw!r} is not a number of minutes from 0.5 to 120")
    return value


def replay(args: argparse.Namespace, seed: int) -> str:
    """The command that runs this run's shape again with its seed."""
    words = ["hive chaos --size", args.size, "--seed", str(seed)]
    for flag in ("orders", "runners", "minutes"):
        if getattr(args, flag) is not None:
            words += [f"--{flag}", f"{getattr(args, flag):g}"]
    if args.loop:
        words.append("--loop")
    if args.forge == "github":
        words += ["--forge", "github"]
    return " ".join(words)


def run(args: argparse.Namespace) -> int:
    if args.size == "small" and args.minutes is not None:
        raise HiveError("--minutes is for --size big; a small run's faults fall in 25 s")
    shape = small() if args.size == "small" else big(minutes=args.minutes or 5.0)
    if args.orders is not None:
        shape = replace(shape, orders=args.orders)
    if args.runners is not None:
        shape = replace(shape, runners=args.runners)
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**32)
    root = _fresh_directory(args.dir)
    out = sys.stderr if args.json else sys.stdout

    def say(line: str) -> None:
        print(f"  {line}", file=out, flush=True)

    print(f"hive chaos: seed {seed} (replay: {replay(args, seed)})", file=out, flush=True)
    loop = args.loop or args.forge == "github"
    finish = FINISH_SECONDS[args.size] + (LOOP_MORE_SECONDS if loop else 0.0)
    began = time.monotonic()
    try:
        with interrupt.installed():
            result = run_chaos(
                root, shape, seed, finish_seconds=finish, say=say, loop=loop, forge=args.forge
            )
    except interrupt.Interrupted as stop:
        print(
            f"hive chaos: seed {seed}, stopped by {stop.name} after "
            f"{time.monotonic() - began:.1f} s; every process it started is stopped, no "
            f"invariant was judged (logs in {root / 'logs'})",
            file=out,
            flush=True,
        )
        return 128 + stop.signum
    print(table(result.checks), file=out)
    for n, lines in result.histories.items():
        print(f"the history of #{n} (hive why {n}, oldest first):", file=out)
        for line in lines:
            print(f"  {line}", file=out)
    for name, code, last in result.unasked:
        print(f"exited by itself (replaced): {name}, exit {code}: {last}", file=out)
    verdict = "every invariant holds" if result.ok else "an invariant broke"
    print(
        f"hive chaos: seed {seed}, {result.seconds:.1f} s, {verdict} (logs in {root / 'logs'})",
        file=out,
        flush=True,
    )
    if args.json:
        found = as_json(
            result.checks, seed, result.seconds, result.acted, result.unasked, result.histories
        )
        print(json.dumps(found, sort_keys=True), flush=True)
    return 0 if result.ok else 1


def _fresh_directory(path: Path) -> Path:
    root = path.resolve()
    if root.exists() and any(root.iterdir()) and not (root / MARKER).exists():
        raise HiveError(f"{root} exists and is not a hive chaos directory: choose another --dir")
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    (root / MARKER).write_text("made by `hive chaos`; cleared by the next one\n")
    return root
