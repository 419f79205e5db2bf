"""`hive drain-plan --runner-drain S --platform-drain S [--waited S] [--json]`.

The drain card as a command: the cap, and for each kind of work what the drain owes it now
(after `--waited` seconds) and at the cap. Drag the wait and watch the bee's row change;
cut the platform drain and watch the cap move.
"""

from __future__ import annotations

import argparse
import json

from hive.rules.drain import (
    EXIT_SECONDS,
    HAND_BACK_SECONDS,
    KIND_NAMES,
    VERDICT_NAMES,
    WORK_KINDS,
    drain_cap_seconds,
    drain_verdict,
)


def seconds(text: str) -> int:
    """A whole number of seconds, 0 or more (argparse turns a ValueError into exit 2)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of seconds") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} is negative; seconds are 0 or more")
    return value


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "drain-plan",
        help="the drain card: the cap and each kind's verdict",
        description=(__doc__ or "").strip().splitlines()[0],
    )
    parser.add_argument(
        "--runner-drain",
        type=seconds,
        required=True,
        metavar="S",
        help="the runner's drain in seconds (HIVE_RUNNER_DRAIN_SECONDS)",
    )
    parser.add_argument(
        "--platform-drain",
        type=seconds,
        required=True,
        metavar="S",
        help="the platform's drain before SIGKILL in seconds; 0 = unknown",
    )
    parser.add_argument(
        "--waited",
        type=seconds,
        default=0,
        metavar="S",
        help="how long the drain has waited so far (default 0)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(func=run)


def verdicts(cap: int, waited: int) -> list[tuple[str, str, str]]:
    """(kind, verdict now, verdict at the cap) for each kind of work, in the card's order."""
    return [
        (
            KIND_NAMES[kind],
            VERDICT_NAMES[drain_verdict(kind, False, waited, cap)],
            VERDICT_NAMES[drain_verdict(kind, False, cap, cap)],
        )
        for kind in range(WORK_KINDS)
    ]


def why_cap(runner_drain: int, platform_drain: int, cap: int) -> str:
    """Which limit set the cap, in words."""
    if platform_drain == 0:
        return "the runner's drain; the platform's drain is unknown"
    if cap == runner_drain:
        return "the runner's drain, which fits before the platform's kill"
    if cap == 0:
        return (
            f"the platform's drain {platform_drain} s leaves no time: the hand-back needs "
            f"{HAND_BACK_SECONDS} s and the exit {EXIT_SECONDS} s"
        )
    return (
        f"the platform's drain {platform_drain} s minus {HAND_BACK_SECONDS} s to hand back "
        f"and {EXIT_SECONDS} s to exit"
    )


def run(args: argparse.Namespace) -> int:
    cap = drain_cap_seconds(args.runner_drain, args.platform_drain)
    rows = verdicts(cap, args.waited)
    if args.json:
        result = {
            "runner_drain_seconds": args.runner_drain,
            "platform_drain_seconds": args.platform_drain,
            "waited_seconds": args.waited,
            "cap_seconds": cap,
            "kinds": {kind: {"now": now, "at_cap": at_cap} for kind, now, at_cap in rows},
        }
        print(json.dumps(result, sort_keys=True))
        return 0
    print(f"cap       {cap} s ({why_cap(args.runner_drain, args.platform_drain, cap)})")
    print(f"waited    {args.waited} s")
    print(f"{'kind':<8}  {'now':<10}  at the cap ({cap} s)")
    for kind, now, at_cap in rows:
        print(f"{kind:<8}  {now:<10}  {at_cap}")
    return 0
