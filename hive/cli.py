"""`hive` (also `python -m hive`): the command line of DESIGN 8.

Each verb is a module in `hive/commands/` with `register(subparsers)`; the parser it adds
sets `func(args) -> int`. Errors are one line on stderr and a non-zero exit.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from hive import __version__
from hive.commands import (
    approve,
    bench,
    chaos,
    credit,
    db,
    demo,
    drain_plan,
    export,
    issue,
    logs,
    migrate,
    order,
    reject,
    serve,
    status,
    why,
)
from hive.errors import HiveError
from hive.settings import SettingsError

# in the order `hive --help` lists them
VERBS = (
    serve,
    migrate,
    db,
    issue,
    order,
    approve,
    reject,
    why,
    logs,
    status,
    credit,
    export,
    drain_plan,
    demo,
    bench,
    chaos,
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hive", description="Run a swarm of coding agents against a repository's issues."
    )
    parser.add_argument("--version", action="version", version=f"hive {__version__}")
    sub = parser.add_subparsers(dest="verb", metavar="COMMAND", required=True)
    for verb in VERBS:
        verb.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except SettingsError as err:
        for line in err.problems:
            print(f"hive: {line}", file=sys.stderr)
        return 2
    except HiveError as err:
        print(f"hive: {err}", file=sys.stderr)
        return err.exit_code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # the reader went away (`hive logs 5 | head`): nothing more to say, and nothing
        # left to flush at exit (it would fail and print a traceback-like warning)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    raise SystemExit(main())
