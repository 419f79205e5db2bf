"""`hive`'s verbs and benchmarks are imported plainly: every module is offered, and one
that cannot be imported stops the command line with its error, never a missing verb."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import hive.bench
import hive.commands
from hive.cli import build_parser
from hive.commands.bench import BENCHES

# modules of hive/bench that are helpers of the benchmarks, not benchmarks
BENCH_HELPERS = {
    "__init__",
    "arguments",
    "processes",
    "gitboot",
    "gitclone",
    "gitdaemon",
    "gitrepo",
    "gitbig",
    "gitmerge",  # the merge step of bench git and bench git --repo
    "scalepool",
    "procstat",
    "http_load",
    "peerworkers",
    "homeserver",  # a throwaway Synapse for bench chat and the chat's tests
}


def choices(parser: argparse.ArgumentParser) -> set[str]:
    (sub,) = (a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return set(sub.choices)


def test_every_verb_module_is_a_verb() -> None:
    modules = {p.stem for p in Path(hive.commands.__file__).parent.glob("*.py")} - {"__init__"}
    assert choices(build_parser()) == {m.replace("_", "-") for m in modules}


def test_every_benchmark_module_is_a_benchmark() -> None:
    modules = {p.stem for p in Path(hive.bench.__file__).parent.glob("*.py")} - BENCH_HELPERS
    assert {m.__name__.rsplit(".", 1)[1] for m in BENCHES} == modules


def test_a_verb_module_that_cannot_be_imported_stops_hive_with_its_error() -> None:
    # None in sys.modules makes `import hive.commands.status` fail as a missing module:
    # exactly what the old import_if_present took for a verb that had not landed
    code = (
        "import sys; sys.modules['hive.commands.status'] = None; "
        "from hive.cli import main; main(['--help'])"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60)
    assert done.returncode == 1
    assert b"hive.commands.status" in done.stderr
    assert b"usage: hive" not in done.stdout
