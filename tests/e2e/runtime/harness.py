"""The world of one runtime e2e test: a real upstream repository (`hive.testing.make_repo`),
a fresh migrated database on the real PostgreSQL, `hive serve` processes started with an
environment of `HIVE_` variables, and a `command:` agent whose every move is steered and
recorded through files in a control directory.

The agent (AGENT_SCRIPT) appends one line to its boundary file, records its turn, then
waits while `<ctl>/<issue>.hold` exists, so a test decides when a turn ends instead of
guessing how long it lasts. `<ctl>/<issue>.mode` says what it does next: `commit` (the
default: commit with the git binary), `salvage` (leave the change uncommitted for the
runner's salvage), or `stubborn` (ignore SIGTERM, start two children that ignore it too,
record every pid, and wait for them).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import psycopg

from hive.rules.keys import key_fingerprint
from hive.store import bundles, issues, orders, runners
from hive.store.issues import NewIssue
from hive.swarm import Serve, WaitTimeout, kill_everything_under, start_serve, wait_for
from hive.testing import GIT, git, make_repo

T = TypeVar("T")

BASE = "main"
KEY = "sk-e2e-runtime-0000"
FINGERPRINT = key_fingerprint(KEY)
ISSUE_FILES = 10  # files/f1.txt .. files/f10.txt exist at base: one boundary per issue

# Short clocks, so the suite takes a few minutes on two cores; what is asserted does not
# change with them.
FAST_CLOCKS = {
    "HIVE_QUEEN_TICK_SECONDS": "0.5",
    "HIVE_RUNNER_SECONDS": "0.2",
    "HIVE_HTTP_ADDR": "127.0.0.1:0",
    "HIVE_MAX_WORKERS": "8",
    "HIVE_WORKER_LANES_PER_KEY": "4",
}

AGENT_SCRIPT = r"""#!/bin/sh
# The e2e bee: steered by files in $1 (see tests/e2e/runtime/harness.py).
ctl=$1
n=$HIVE_ISSUE
file=$(printf '%s\n' "$HIVE_BOUNDARY" | head -n 1)
echo "issue $n turn $$" >> "$file"
echo "$$ $PWD" >> "$ctl/$n.turns"
mode=$(cat "$ctl/$n.mode" 2>/dev/null || echo commit)
if [ "$mode" = stubborn ]; then
    trap '' TERM
    echo $$ >> "$ctl/$n.pids"
    sleep 600 &
    echo $! >> "$ctl/$n.pids"
    sh -c 'sleep 600' &
    echo $! >> "$ctl/$n.pids"
    touch "$ctl/$n.stubborn"
    wait
    wait
fi
while [ -e "$ctl/$n.hold" ]; do sleep 0.05; done
if [ "$mode" = commit ]; then
    git -c user.name=bee -c user.email=bee@hive.invalid -c commit.gpgsign=false \
        commit -q -a -m "issue $n turn $$"
fi
"""


@dataclass
class Turn:
    pid: int
    cwd: str


@dataclass
class World:
    root: Path
    db_url: str
    db: psycopg.Connection[Any]
    upstream: Path = field(init=False)
    ctl: Path = field(init=False)
    serves: list[Serve] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.upstream = self.root / "upstream"
        self.ctl = self.root / "ctl"
        self.ctl.mkdir()
        (self.root / "agent.sh").write_text(AGENT_SCRIPT)
        files = {f"files/f{n}.txt": f"file {n}\n" for n in range(1, ISSUE_FILES + 1)}
        make_repo(self.upstream, files, branch=BASE)

    # ---- processes ---------------------------------------------------------------

    def env(self, name: str, role: str, **extra: str) -> dict[str, str]:
        return {
            "HIVE_DATABASE_URL": self.db_url,
            "HIVE_REPO_URL": str(self.upstream),
            "HIVE_BASE_REF": BASE,
            "HIVE_WORKDIR": str(self.root / name),
            "HIVE_ROLE": role,
            "HIVE_RUNNER_NAME": name,
            "HIVE_AGENT": f"command:sh {self.root / 'agent.sh'} {self.ctl}",
            # the agent is driven through a control directory outside its tree and its
            # pids are checked from outside: unsandboxed here, and the sandbox's own
            # guarantees are tests/e2e/sandbox
            "HIVE_AGENT_SANDBOX": "off",
            "HIVE_WORKER_KEY": KEY,
            **FAST_CLOCKS,
            **extra,
        }

    def start(self, name: str, role: str, **extra: str) -> Serve:
        serve = start_serve(name, self.env(name, role, **extra), cwd=self.root, log_dir=self.logs)
        self.serves.append(serve)
        return serve

    def queen(self, name: str = "queen", **extra: str) -> Serve:
        """A Queen that only queues orders (elsewhere mode)."""
        return self.start(name, "queen", HIVE_QUEEN_BEES_RUN_ELSEWHERE="on", **extra)

    def runner(self, name: str, **extra: str) -> Serve:
        return self.start(name, "runner", **extra)

    @property
    def logs(self) -> Path:
        return self.root / "logs"

    def cleanup(self) -> list[int]:
        return kill_everything_under(self.root, self.serves)

    def wait(self, condition: Callable[[], T | None], seconds: float, what: str) -> T:
        """Poll a real condition; on timeout fail with every process's log tail."""
        try:
            return wait_for(condition, seconds, what)
        except WaitTimeout as err:
            raise AssertionError(f"{err}\n{self.report()}") from None

    def exit_code(self, serve: Serve, seconds: float) -> int:
        try:
            return serve.wait(seconds)
        except WaitTimeout as err:
            raise AssertionError(f"{err}\n{self.report()}") from None

    def report(self) -> str:
        parts = [
            f"--- {s.name} (pid {s.pid}, exit {s.exit_code()}):\n{s.tail(25)}" for s in self.serves
        ]
        rows = [
            f"#{o.issue} attempt {o.attempt} claimed_by={o.claimed_by} outcome={o.outcome}"
            for o in orders.listing(self.db)
        ]
        return "\n".join([*parts, "--- orders:", *rows])

    # ---- the agent's control files -----------------------------------------------

    def hold(self, issue: int) -> None:
        (self.ctl / f"{issue}.hold").touch()

    def release(self, issue: int) -> None:
        (self.ctl / f"{issue}.hold").unlink(missing_ok=True)

    def mode(self, issue: int, mode: str) -> None:
        (self.ctl / f"{issue}.mode").write_text(mode + "\n")

    def turns(self, issue: int) -> list[Turn]:
        path = self.ctl / f"{issue}.turns"
        if not path.exists():
            return []
        found = []
        for line in path.read_text().splitlines():
            pid, _, cwd = line.partition(" ")
            found.append(Turn(int(pid), cwd))
        return found

    def pids(self, issue: int) -> list[int]:
        path = self.ctl / f"{issue}.pids"
        return [int(p) for p in path.read_text().split()] if path.exists() else []

    # ---- the store -----------------------------------------------------------------

    def add_issue(self, n: int, title: str | None = None) -> None:
        issue = NewIssue(
            title=title or f"Change file {n}",
            body=f"Add a line to files/f{n}.txt.",
            boundary=(f"files/f{n}.txt",),
            # the demo reviewer's form: the agent's line is "issue N turn PID"
            criteria=(f"file `files/f{n}.txt` contains `issue {n} turn`",),
        )
        issues.upsert(self.db, n, issue)

    def merged(self, issue: int) -> str | None:
        """The merge sha once `issue` is closed by the merge of its work."""
        row = self.db.execute(
            "SELECT d.merged_sha FROM hive.queen_issue AS i JOIN hive.queen_dispatch AS d"
            " ON d.issue = i.number WHERE i.number = %s AND i.state = 'closed'",
            (issue,),
        ).fetchone()
        return None if row is None else row[0]

    def order(self, issue: int) -> orders.Order | None:
        return orders.get(self.db, issue)

    def ended(self, issue: int) -> orders.Order | None:
        order = orders.get(self.db, issue)
        return order if order is not None and order.finished_at is not None else None

    def queued(self, issue: int) -> orders.Order | None:
        order = orders.get(self.db, issue)
        return order if order is not None and order.queued_at is not None else None

    def claimed(self, issue: int, by: str | None = None) -> orders.Order | None:
        order = orders.get(self.db, issue)
        if order is None or order.finished_at is not None or order.claimed_by is None:
            return None
        return order if by is None or order.claimed_by == by else None

    def renewed_after(self, issue: int, by: str, moment: Any) -> bool:
        """`by` still holds the claim and has renewed it after `moment` (db time)."""
        order = self.claimed(issue, by)
        return order is not None and order.claimed_at is not None and order.claimed_at > moment

    def attempt(self, issue: int, attempt: int) -> dict[str, Any] | None:
        """Attempt `attempt` of `issue` once it has ended, as column -> value, wherever
        it is now: the current row, or the history row it was archived to when the next
        attempt replaced it (which may happen before a test's next poll)."""
        current = orders.get(self.db, issue)
        if current is not None and current.attempt == attempt:
            if current.finished_at is None:
                return None
            return {
                "outcome": current.outcome,
                "claimed_by": current.claimed_by,
                "salvaged_sha": current.salvaged_sha,
                "salvaged_at": current.salvaged_at,
                "salvaged_files": current.salvaged_files,
                "queued_at": current.queued_at,
            }
        return next((h for h in self.history(issue) if h["attempt"] == attempt), None)

    def history(self, issue: int) -> list[dict[str, Any]]:
        return [a.snapshot for a in orders.history(self.db, issue)]

    def bundle(self, issue: int) -> bundles.Bundle | None:
        return bundles.get(self.db, issue)

    def runner_row(self, name: str) -> runners.Runner | None:
        return next((r for r in runners.listing(self.db) if r.name == name), None)

    def now(self) -> Any:
        row = self.db.execute("SELECT now()").fetchone()
        assert row is not None
        return row[0]

    # ---- bundles through the product's own door, judged by git ---------------------

    def export(self, issue: int, checkout_of: str | None = None) -> Path:
        """`python -m hive export ISSUE -o FILE` from a process with no checkout of its
        own, so the bundle comes from queen_bundle; or, with `checkout_of`, as that
        process (its HIVE_WORKDIR), so it comes from its checkout when the branch is there."""
        out = self.root / f"exported-{issue}-{len(list(self.root.glob('exported-*')))}.bundle"
        env = {k: v for k, v in os.environ.items() if not k.startswith("HIVE_")}
        env.update(
            HIVE_DATABASE_URL=self.db_url,
            HIVE_WORKDIR=str(self.root / (checkout_of or "export-side")),
            HIVE_BASE_REF=BASE,
        )
        done = subprocess.run(
            [sys.executable, "-m", "hive", "export", str(issue), "-o", str(out)],
            env=env,
            cwd=self.root,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, f"hive export {issue}: {done.stderr}"
        return out

    def fetch(self, issue: int, checkout_of: str | None = None) -> Fetched:
        """Export the issue's bundle, `git bundle verify` it and `git fetch` it into a
        fresh clone of upstream."""
        path = self.export(issue, checkout_of)
        clone = self.root / f"clone-{path.stem}"
        git("clone", "-q", str(self.upstream), str(clone), cwd=self.root)
        git("bundle", "verify", "-q", str(path), cwd=clone)
        branch = f"queen-{issue}"
        git("fetch", "-q", str(path), f"{branch}:{branch}", cwd=clone)
        return Fetched(clone, branch, git("rev-parse", branch, cwd=clone))


@dataclass
class Fetched:
    clone: Path
    branch: str
    head: str

    def file(self, path: str) -> str:
        return git("show", f"{self.head}:{path}", cwd=self.clone)

    def has_ancestor(self, sha: str) -> bool:
        done = subprocess.run(
            [GIT, "merge-base", "--is-ancestor", sha, self.head],
            cwd=self.clone,
            capture_output=True,
            timeout=30,
        )
        return done.returncode == 0

    def commits_beyond_base(self) -> int:
        return int(git("rev-list", "--count", f"{BASE}..{self.head}", cwd=self.clone))
