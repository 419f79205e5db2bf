"""A turn that leaves large random files (issue 25, item 2) in a real `hive serve`: the
process answers `/healthz` within a second all through the turn's salvage and bundle,
honours SIGTERM by the drain card meanwhile, and the bundle it stores is one git fetches.

Before, the bundle's delta of a 2 MiB random rewrite (dulwich's, holding the GIL) froze
the whole process for about a minute: no `/healthz`, no signal handled."""

from __future__ import annotations

import http.client
import os
import re
import signal
import subprocess
import threading
import time
from datetime import datetime
from urllib.parse import urlsplit

import pytest

from hive.store import issues
from hive.store.issues import NewIssue
from hive.testing import GIT, git

from .harness import World

pytestmark = [pytest.mark.e2e, pytest.mark.live]

START_SECONDS = 60.0
EXIT_SECONDS = 60.0
ANSWER_SECONDS = 1.0  # the promise: /healthz within a second, whatever git is doing
PROBE_TIMEOUT_SECONDS = 10.0
REWRITE_BYTES = 2 << 20  # the issue's case: a 2 MiB random file rewritten
NEW_BYTES = 16 << 20  # and a new one, so the bundle takes a while to build

AGENT = rf"""#!/bin/sh
ctl=$1
n=$HIVE_ISSUE
head -c {REWRITE_BYTES} /dev/urandom > files/big.bin
head -c {NEW_BYTES} /dev/urandom > files/new.bin
cp files/big.bin "$ctl/$n.big"
date +%s.%N > "$ctl/$n.done"
"""


class Probes(threading.Thread):
    """GET /healthz over and over: (wall-clock start, seconds to answer, or None when no
    answer came) of each."""

    def __init__(self, url: str) -> None:
        super().__init__(name="healthz-probes", daemon=True)
        parts = urlsplit(url)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 80
        self.seen: list[tuple[float, float | None]] = []
        self.halt = threading.Event()

    def run(self) -> None:
        while not self.halt.is_set():
            started, clock = time.time(), time.monotonic()
            took: float | None = None
            try:
                conn = http.client.HTTPConnection(
                    self.host, self.port, timeout=PROBE_TIMEOUT_SECONDS
                )
                conn.request("GET", "/healthz")
                if conn.getresponse().status == 200:
                    took = time.monotonic() - clock
                conn.close()
            except OSError:
                took = None
            self.seen.append((started, took))
            self.halt.wait(0.02)


def served_url(log: str) -> str | None:
    found = re.search(r"serving on (http://\S+)", log)
    return found.group(1) if found else None


def test_a_large_random_rewrite_leaves_healthz_answering_and_sigterm_honoured(
    world: World,
) -> None:
    (world.upstream / "files" / "big.bin").write_bytes(os.urandom(REWRITE_BYTES))
    git("add", "files/big.bin", cwd=world.upstream)
    git("commit", "-qm", "a large random file", cwd=world.upstream)
    agent = world.root / "big-agent.sh"
    agent.write_text(AGENT)
    issues.upsert(
        world.db,
        1,
        NewIssue(
            title="Rewrite the large file",
            body="Rewrite files/big.bin and add files/new.bin.",
            boundary=("files/big.bin", "files/new.bin"),
            criteria=("file `files/big.bin` exists",),
        ),
    )
    world.queen()
    runner = world.runner(
        "runner-a",
        HIVE_AGENT=f"command:sh {agent} {world.ctl}",
        HIVE_RUNNER_DRAIN_SECONDS="120",
    )
    url = world.wait(lambda: served_url(runner.log()), START_SECONDS, "runner-a serves HTTP")
    probes = Probes(url)
    probes.start()
    done = world.ctl / "1.done"
    world.wait(lambda: done.exists() or None, START_SECONDS, "the agent wrote its files")
    world.wait(lambda: done.read_text().strip() or None, 10, "the agent noted its end")
    runner.send(signal.SIGTERM)  # while the turn's salvage and bundle run
    code = world.exit_code(runner, EXIT_SECONDS)
    probes.halt.set()
    probes.join(PROBE_TIMEOUT_SECONDS + 5)
    assert code == 0, world.report()

    order = world.ended(1)
    assert order is not None and order.outcome == "finished", world.report()
    assert order.finished_at is not None
    agent_done = float(done.read_text())
    ended = order.finished_at.timestamp()
    during = [(at, took) for at, took in probes.seen if agent_done <= at <= ended]
    assert during, (
        f"no probe between the agent's end and the order's end ({ended - agent_done:.2f} s)"
    )
    slow = [
        (datetime.fromtimestamp(at).isoformat(), took)
        for at, took in probes.seen
        if at <= ended and (took is None or took > ANSWER_SECONDS)
    ]
    assert slow == [], (
        f"/healthz was slow or silent: {slow[:5]} ({len(slow)} of {len(probes.seen)})"
    )

    fetched = world.fetch(1)
    shown = subprocess.run(
        [GIT, "cat-file", "blob", f"{fetched.head}:files/big.bin"],
        cwd=fetched.clone,
        capture_output=True,
        check=True,
        timeout=60,
    )
    assert shown.stdout == (world.ctl / "1.big").read_bytes()
