"""A throwaway local hive for the process benchmarks (`drain`, `recovery`): a scratch
database on the configured server, a sample repository under /tmp, and real
`hive serve` processes (hive/swarm.py) running a `command:` agent that the benchmark
steers through files.

The agent appends one line to its boundary file (left uncommitted: the runner's salvage
commits it), records its pid in `<ctl>/<issue>.turns`, and waits while
`<ctl>/<issue>.hold` exists, so a benchmark decides when each turn ends.
"""

from __future__ import annotations

import shutil
import statistics
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import psycopg

from hive import demo_data
from hive.errors import HiveError
from hive.rules.outcome_codes import OutcomeCode
from hive.settings import Settings
from hive.store import connect, issues, orders, runners, scratch
from hive.store.issues import NewIssue
from hive.swarm import Serve, WaitTimeout, kill_everything_under, start_serve, wait_for

T = TypeVar("T")

KEY = "bench-key-not-a-secret"
FILES = 64  # files/f1.txt .. files/f64.txt: one boundary per issue
START_SECONDS = 60.0  # from `hive serve` to a running turn, on a loaded machine
AGENT_SCRIPT = r"""#!/bin/sh
ctl=$1
n=$HIVE_ISSUE
file=$(printf '%s\n' "$HIVE_BOUNDARY" | head -n 1)
echo "turn $$" >> "$file"
echo $$ >> "$ctl/$n.turns"
while [ -e "$ctl/$n.hold" ]; do sleep 0.02; done
"""
CLOCKS = {
    "HIVE_QUEEN_TICK_SECONDS": "0.5",
    "HIVE_RUNNER_SECONDS": "0.2",
    "HIVE_HTTP_ADDR": "127.0.0.1:0",
    "HIVE_MAX_WORKERS": "64",
    "HIVE_WORKER_LANES_PER_KEY": "4",
    "HIVE_BEE_MEMORY_MB": "64",
    # four keys of four lanes: room for 16 bees at once (drain's --bees goes to 16)
    "HIVE_WORKER_KEY": KEY,
    **{f"HIVE_WORKER_KEY_{i}": f"{KEY}-{i}" for i in (2, 3, 4)},
}


class LocalHive:
    def __init__(self, root: Path, url: str, settings: Settings) -> None:
        self.root = root
        self.url = url
        self.ctl = root / "ctl"
        self.repo = root / "repo"
        self.settings = settings
        self.serves: list[Serve] = []
        self.db: psycopg.Connection[Any] = psycopg.connect(url, autocommit=True)
        self._next_issue = 1

    def env(self, name: str, role: str, **extra: str) -> dict[str, str]:
        return {
            "HIVE_DATABASE_URL": self.url,
            "HIVE_REPO_URL": str(self.repo),
            "HIVE_BASE_REF": demo_data.BASE,
            "HIVE_WORKDIR": str(self.root / name),
            "HIVE_ROLE": role,
            "HIVE_RUNNER_NAME": name,
            "HIVE_AGENT": f"command:sh {self.root / 'agent.sh'} {self.ctl}",
            # the bench's agent is steered through a control directory outside its tree:
            # a sandbox would hide it (the sandbox's own cost: `hive bench adapters`)
            "HIVE_AGENT_SANDBOX": "off",
            "HIVE_LOG_LEVEL": self.settings.log_level,
            **CLOCKS,
            **extra,
        }

    def start(self, name: str, role: str, **extra: str) -> Serve:
        env = self.env(name, role, **extra)
        serve = start_serve(name, env, cwd=self.root, log_dir=self.root / "logs")
        self.serves.append(serve)
        return serve

    def queen(self, **extra: str) -> Serve:
        return self.start("queen", "queen", HIVE_QUEEN_BEES_RUN_ELSEWHERE="on", **extra)

    def new_issues(self, count: int, *, hold: bool = True) -> list[int]:
        """`count` new issues (held: their turns wait for `release`)."""
        made = []
        for _ in range(count):
            n = self._next_issue
            if n > FILES:
                raise HiveError(f"the benchmark ran out of sample files ({FILES} issues)")
            self._next_issue += 1
            if hold:
                (self.ctl / f"{n}.hold").touch()
            issue = NewIssue(title=f"bench {n}", boundary=(f"files/f{n}.txt",))
            issues.upsert(self.db, n, issue)
            made.append(n)
        return made

    def release(self, *numbers: int) -> None:
        for n in numbers:
            (self.ctl / f"{n}.hold").unlink(missing_ok=True)

    def close(self, *numbers: int) -> None:
        """Close issues whose part in the benchmark is over, so no round queues them again."""
        for n in numbers:
            issues.set_state(self.db, n, "closed")

    def turns(self, n: int) -> int:
        path = self.ctl / f"{n}.turns"
        return len(path.read_text().split()) if path.exists() else 0

    def order(self, n: int) -> orders.Order | None:
        return orders.get(self.db, n)

    def ended(self, n: int) -> orders.Order | None:
        order = orders.get(self.db, n)
        return order if order is not None and order.finished_at is not None else None

    def claimed_by(self, n: int, runner: str) -> orders.Order | None:
        order = orders.get(self.db, n)
        if order is None or order.finished_at is not None or order.claimed_by != runner:
            return None
        return order

    def registered(self, name: str) -> bool:
        return any(r.name == name for r in runners.listing(self.db))

    def outcomes(self, n: int) -> list[OutcomeCode | None]:
        """Issue `n`'s attempts' codes, oldest first (None: not ended, or no order)."""
        current = orders.get(self.db, n)
        archived = [a.outcome_code for a in orders.history(self.db, n)]
        return [*archived, current.outcome_code if current else None]

    def wait(
        self, condition: Callable[[], T | None], seconds: float, what: str, poll: float = 0.01
    ) -> T:
        """Poll `condition` (every `poll` s: the benchmark's timing resolution); on timeout
        a one-line error that points at the logs."""
        try:
            return wait_for(condition, seconds, what, poll_seconds=poll)
        except WaitTimeout as err:
            raise HiveError(f"bench: {err} (logs in {self.root / 'logs'})") from None

    def exit_code(self, serve: Serve, seconds: float) -> int:
        try:
            return serve.wait(seconds)
        except WaitTimeout as err:
            raise HiveError(f"bench: {err} (log {serve.log_path})") from None

    def shutdown(self) -> None:
        kill_everything_under(self.root, self.serves)
        self.db.close()


@contextmanager
def local_hive(settings: Settings, *, keep: bool = False) -> Iterator[LocalHive]:
    """A LocalHive on a scratch database beside the configured one; every process is
    killed and the directory removed afterwards (kept with `keep`, for its logs)."""
    server = connect.database_url(settings)
    connect.check_reachable(server)
    root = Path(tempfile.mkdtemp(prefix="hive-bench-", dir="/tmp"))
    try:
        (root / "ctl").mkdir()
        (root / "agent.sh").write_text(AGENT_SCRIPT)
        files = {f"files/f{n}.txt": f"file {n}\n" for n in range(1, FILES + 1)}
        demo_data.make_repository(root / "repo", files)
        with scratch.database(server, prefix="hive_bench_proc") as url:
            hive = LocalHive(root, url, settings)
            try:
                yield hive
            finally:
                hive.shutdown()
    finally:
        if not keep:
            shutil.rmtree(root, ignore_errors=True)


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")
