"""A small chaos run as `make test` makes it: `hive chaos --size small --json` with a fixed seed
(one fault of each kind: a runner SIGKILLed and one SIGTERMed, the Queen SIGKILLed and
SIGTERMed, a PostgreSQL restart, a runner stopped past its silent window) keeps every
invariant, prints its seed first so a failure can be replayed, and its invariants as one
JSON object on stdout (the table and the rest on stderr)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from hive.swarm import clean_environment, processes_under

pytestmark = [pytest.mark.e2e, pytest.mark.live]

SEED = 15
RUN_SECONDS = 280  # a run is about a minute here; its own deadlines come well before this
INVARIANTS = (
    "every order ended once as finished",
    "0 overlapping turns of one issue",
    "0 lost bundles",
    "nothing outside a boundary in a bundle",
    "no agent outlives its runner",
    "every SIGTERM exits 0",
    "every finished turn sold once",
)


def test_a_small_chaos_run_keeps_every_invariant(tmp_path: Path):
    root = tmp_path / "chaos"
    command = [
        sys.executable,
        "-m",
        "hive",
        "chaos",
        "--size",
        "small",
        "--seed",
        str(SEED),
        "--json",
    ]
    done = subprocess.run(
        [*command, "--dir", str(root)],
        env=clean_environment({}),
        capture_output=True,
        text=True,
        timeout=RUN_SECONDS,
        check=False,
    )
    out = done.stderr
    assert done.returncode == 0, out + done.stdout
    lines = out.splitlines()
    found = json.loads(done.stdout)  # one object, nothing else on stdout
    assert found["seed"] == SEED and found["ok"] is True
    assert set(found["invariants"]) == set(INVARIANTS)
    assert all(v["ok"] and v["measured"] for v in found["invariants"].values()), found
    # the SIGKILL goes to a runner whose agents run (one between turns tells nothing)
    outliving = found["invariants"]["no agent outlives its runner"]["measured"]
    assert int(outliving.split()[0]) > 0, outliving
    assert len(found["faults"]) == 6
    assert lines[0].startswith(f"hive chaos: seed {SEED} (replay: hive chaos --size small")
    for name in INVARIANTS:
        row = next(line for line in lines if line.startswith(name))
        assert row[len(name) :].split()[0] == "ok", row
    assert sum(1 for line in lines if " s  " in line and ":" in line) == 6  # the faults
    assert processes_under(tmp_path) == []
