"""`hive bench <name> [--json]`: each benchmark is `hive.bench.<name>` with
`add_arguments(parser)` and `run(args, settings) -> dict`. It prints a table of the
dict, or the dict as one JSON object with `--json`."""

from __future__ import annotations

import argparse
import json

from hive.bench import (
    adapters,
    board,
    chat,
    claim,
    drain,
    endings,
    git,
    http,
    intake,
    latency,
    peers,
    publish,
    recovery,
    scale,
)
from hive.settings import Settings

# in the order `hive bench --help` lists them
BENCHES = (
    claim,
    latency,
    drain,
    git,
    endings,
    recovery,
    publish,
    http,
    scale,
    intake,
    peers,
    adapters,
    board,
    chat,
)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("bench", help="benchmarks, each side by side with its ceiling")
    benches = parser.add_subparsers(dest="bench", metavar="BENCH", required=True)
    for module in BENCHES:
        name = module.__name__.rsplit(".", 1)[1]
        one = benches.add_parser(name, help=(module.__doc__ or name).strip().splitlines()[0])
        one.add_argument("--json", action="store_true", help="print one JSON object")
        module.add_arguments(one)
        one.set_defaults(func=run, module=module)


def run(args: argparse.Namespace) -> int:
    result = args.module.run(args, Settings.from_env())
    if args.json:
        print(json.dumps(result, sort_keys=True))
    else:
        width = max(len(k) for k in result)
        for key, value in result.items():
            shown = f"{value:.3f}" if isinstance(value, float) else value
            print(f"{key:<{width}}  {shown}")
    return 0
