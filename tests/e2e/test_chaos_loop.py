"""A small `hive chaos --loop` run as `make test` makes it: 20 issues with a criterion
through the bees, a `command:` reviewer that sends some back, crashes on others and hangs
past its bound on others (one fails until the floor escalates it), a check red once and
publish by push over git:// (`git daemon`), under one fault of each kind and three aimed
at a publish and a review, while a person pushes to main four times (two edit the file of
an issue in flight); issues carry priority labels, two aged past their bound. Every issue
is merged once or escalated, main holds each change and each push of the person once,
the Queen chose in priority order, and every other invariant holds. Main is read again
here with the git binary."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from hive.chaos.loop import ESCALATED, verdicts
from hive.swarm import clean_environment, processes_under
from hive.testing import git

RUN_SECONDS = 400  # a run is a minute here, four at a load average of 40 on 2 cores
# the run's own deadlines come well before this; the suite's 300 s bound is too short for
# a loaded machine
pytestmark = [pytest.mark.e2e, pytest.mark.live, pytest.mark.timeout(RUN_SECONDS + 60)]

SEED = 15
ORDERS = 20
LOOP = (
    "every issue merged once or escalated",
    "main holds each change once",
    "main keeps every push of a person",
    "who goes next: by level and ageing",
    "no issue sits past its state's bound",
)


def test_a_small_loop_run_merges_every_issue_once(tmp_path: Path):
    root = tmp_path / "chaos"
    args = ["--size", "small", "--orders", str(ORDERS), "--seed", str(SEED), "--loop", "--json"]
    done = subprocess.run(
        [sys.executable, "-m", "hive", "chaos", *args, "--dir", str(root)],
        env=clean_environment({}),
        capture_output=True,
        text=True,
        timeout=RUN_SECONDS,
        check=False,
    )
    assert done.returncode == 0, done.stderr + done.stdout
    assert done.stderr.splitlines()[0].endswith(f"--seed {SEED} --orders {ORDERS} --loop)")
    found = json.loads(done.stdout)
    assert found["ok"] is True and found["seed"] == SEED
    for name in LOOP:
        assert found["invariants"][name]["ok"], found["invariants"][name]
    measured = found["invariants"][LOOP[0]]["measured"]
    # one issue's reviews fail three times in a row (hang, crash, hang): escalated
    assert measured.startswith(f"{ORDERS - 1} merged, 1 escalated of {ORDERS}"), measured
    assert "a check red once" in measured
    # the reviewer sent work back, crashed and hung past its bound: no count is 0
    for way in (" 0 reviews sent back", " 0 crashed", " 0 hung"):
        assert way not in measured
    kept = found["invariants"][LOOP[2]]["measured"]
    assert kept.startswith("4 pushes (") and "(0 to an issue's file" not in kept, kept
    # one fault of each kind, three aimed at a moment, and four pushes of a person
    pushes = [line for line in found["faults"] if "a person pushed" in line]
    assert len(found["faults"]) == 13 and len(pushes) == 4, found["faults"]
    assert not [line for line in found["faults"] if "missed" in line], found["faults"]
    upstream = root / "upstream"
    git("fsck", "--strict", cwd=upstream)
    plan = verdicts(range(1, ORDERS + 1), SEED)
    for n in range(1, ORDERS + 1):
        held = git("show", f"main:files/f{n}.txt", cwd=upstream)
        assert (f"chaos {n} turn " in held) is (plan[n] != ESCALATED), (n, held)
    assert processes_under(tmp_path) == []
