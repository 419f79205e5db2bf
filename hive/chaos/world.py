"""The world of one chaos run: a private embedded PostgreSQL (so the run may restart it;
its data in a directory of its own under /tmp, see `pgbase`), and under the run's root
the upstream repository (`upstream/`), the agent's control directory (`ctl/`: its
script, each issue's ticks, the turns' log), and the `hive serve` processes, each with
its own workdir under `procs/` and its log under `logs/`.

With --loop the upstream repository is served over git:// by `git daemon` (pushes
taken), and the hive and the person (`hive.chaos.person`) fetch and push through it as
through a real origin.

A runner slot holds one runner process at a time; a replacement gets a new name (a new
pod). The Queen's replacement keeps her name, as a StatefulSet's pod does: her lease is
held by name, so she goes on at once instead of waiting out the lease of the one killed.
"""

from __future__ import annotations

import math
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

import psycopg

from hive.bench.gitdaemon import GitDaemon
from hive.chaos import dwell, interrupt, loop, priority
from hive.chaos.agent import LOG_NAME, SCRIPT
from hive.chaos.plan import TICK_SECONDS, Plan, Shape
from hive.errors import HiveError
from hive.git.commits import init_repository
from hive.git.safety import git_environment
from hive.rules.jobs import LOST_JOB_SECONDS
from hive.store import credits, embedded, issues, migrate
from hive.store.issues import NewIssue
from hive.swarm import Serve, start_serve

BASE = "main"
QUEEN = "queen"
SLOTS_PER_RUNNER = 2
LANES_PER_KEY = 4
ACCOUNT = "chaos"  # every issue's credit account
GRANT_TOKENS = 10**9
BEE_MEMORY_MB = 16
DRAIN_SECONDS = 3  # a SIGTERMed runner holds its bees this long, then hands them back
# --loop: a review's bound; the chaos reviewer answers at once, or hangs past it
REVIEW_MAX_SECONDS = 5
JOB_CLAIM_SECONDS = 20
DWELL_SLACK_SECONDS = 60.0  # what a loaded machine may add to a place's own clocks
DWELL_STARTS = 3  # starts of the swarm a stay may live through

CLOCKS = {
    "HIVE_QUEEN_TICK_SECONDS": "0.5",
    "HIVE_RUNNER_SECONDS": "0.2",
    "HIVE_RUNNER_DRAIN_SECONDS": str(DRAIN_SECONDS),
    "HIVE_HTTP_ADDR": "127.0.0.1:0",
    # a bee's memory guard all but off, but measured: reviews run side by side (with 0,
    # "unmeasured", the reviewer runs one at a time: hive/rules/reviewer.py)
    "HIVE_BEE_MEMORY_MB": str(BEE_MEMORY_MB),
    "HIVE_WORKER_LANES_PER_KEY": str(LANES_PER_KEY),
    "HIVE_RUNNER_SLOTS": str(SLOTS_PER_RUNNER),
    "HIVE_PUBLISH": "off",
}


@dataclass
class World:
    root: Path
    shape: Shape
    loop: bool = False  # --loop: criteria, a reviewer, a check, publish by push
    url: str = ""
    runners: dict[int, Serve] = field(default_factory=dict)  # slot -> its live runner
    queen: Serve | None = None
    signalled: list[Serve] = field(default_factory=list)  # got SIGTERM: each must exit 0
    killed: list[Serve] = field(default_factory=list)
    # exited before anyone signalled it: (name, exit code, its log's last line)
    unasked: list[tuple[str, int, str]] = field(default_factory=list)
    _made: int = 0

    # the server's data, in a directory of its own under /tmp: as root the server runs as
    # another user, who must traverse every ancestor (a pytest tmp_path is 0700)
    pgbase: Path | None = None
    daemon: GitDaemon | None = None  # --loop: the origin over git://
    forge: Any = None  # --forge github: the fake GitHub's side (hive/chaos/github.py)
    serve_seconds: float = 0.0  # how long the swarm took to serve at the start

    @property
    def pgdata(self) -> Path:
        assert self.pgbase is not None, "the world is not built"
        return self.pgbase / "pg"

    @property
    def upstream(self) -> Path:
        return self.root / "upstream"

    @property
    def repo_url(self) -> str:
        """Where the hive fetches and pushes: the daemon's URL with --loop, else the path."""
        return self.daemon.url(self.upstream.name) if self.daemon else str(self.upstream)

    @property
    def ctl(self) -> Path:
        return self.root / "ctl"

    @property
    def procs(self) -> Path:
        return self.root / "procs"

    @property
    def turns_log(self) -> Path:
        return self.ctl / LOG_NAME

    def connect(self) -> psycopg.Connection[Any]:
        return psycopg.connect(self.url, autocommit=True, connect_timeout=10)

    # ---- set-up ------------------------------------------------------------------

    def build(self, plan: Plan) -> None:
        """The server (migrated), the repository, the agent, and one issue per order."""
        self.pgbase = Path(tempfile.mkdtemp(prefix="hive-chaos-", dir="/tmp"))
        try:
            with interrupt.held():  # a server half started could not be stopped
                self.url = embedded.start(self.pgdata)
        except HiveError:
            raise
        except Exception as err:  # the package's own error: its first line is enough
            first = str(err).strip().splitlines()[0] if str(err).strip() else repr(err)
            raise HiveError(f"could not start the embedded PostgreSQL: {first}") from err
        migrate.apply(self.url)
        files = {issue_file(n): f"file {n}\n" for n in plan.ticks}
        init_repository(
            self.upstream, files, branch=BASE, message="chaos\n", author=b"chaos <c@hive.invalid>"
        )
        if self.loop:
            # pushed to over git:// like a bare origin: its work tree is never read
            _git_config(self.upstream, "receive.denyCurrentBranch", "ignore")
            env = git_environment(os.environ) | {"HOME": str(self.root)}
            self.daemon = GitDaemon(self.root, "git", env, pushes=True).__enter__()
        (self.ctl / "ticks").mkdir(parents=True)
        (self.ctl / "agent.sh").write_text(SCRIPT)
        self.turns_log.touch()
        for n, ticks in plan.ticks.items():
            (self.ctl / "ticks" / str(n)).write_text(f"{ticks}\n")
        if self.loop:
            (self.ctl / "reviews").mkdir()
            (self.ctl / "reviewer.sh").write_text(loop.REVIEWER)
            for n, said in loop.verdicts(sorted(plan.ticks), plan.seed).items():
                (self.ctl / "reviews" / str(n)).write_text("".join(f"{v}\n" for v in said))
        label_of, aged = priority.labels(sorted(plan.ticks), plan.seed) if self.loop else ({}, ())
        if self.forge is not None:  # GitHub's issues come by the Queen's poll, none aged
            self.forge.open(self.upstream)
            self.forge.add_issues({n: issue_file(n) for n in plan.ticks}, ACCOUNT, label_of)
        with self.connect() as db:
            for n in plan.ticks if self.forge is None else ():
                issue = NewIssue(
                    title=f"chaos {n}",
                    labels=(label_of[n],) if n in label_of else (),
                    body=f"A line in {issue_file(n)}.",
                    boundary=(issue_file(n),),
                    criteria=(f"file `{issue_file(n)}` contains `chaos {n} turn`",)
                    if self.loop
                    else (),
                    account=ACCOUNT,
                )
                issues.upsert(db, n, issue)
            # opened past the ageing bound, as a person's old issue is (--loop)
            db.execute(
                "UPDATE hive.queen_issue SET created_at = now() - make_interval(secs => %s)"
                " WHERE number = ANY(%s)",
                (priority.AGED_BY_SECONDS, sorted(aged)),
            )
            # credits on: every turn is sold to ACCOUNT, which never runs out
            credits.grant(db, ACCOUNT, GRANT_TOKENS, Decimal(30), "chaos")

    # ---- processes ---------------------------------------------------------------

    def env(self, name: str, role: str) -> dict[str, str]:
        slots = self.shape.runners * SLOTS_PER_RUNNER
        env = {
            "HIVE_DATABASE_URL": self.url,
            "HIVE_REPO_URL": self.repo_url,
            "HIVE_BASE_REF": BASE,
            "HIVE_WORKDIR": str(self.procs / name),
            "HIVE_ROLE": role,
            "HIVE_RUNNER_NAME": QUEEN if role == "queen" else name,
            "HIVE_AGENT": f"command:sh {self.ctl / 'agent.sh'} {self.ctl}",
            # the chaos agent reports its pids and reads its orders in a control directory
            # outside its tree, and the faults find its processes by those pids: a
            # sandbox would hide both (the sandbox's own faults: tests/e2e/sandbox)
            "HIVE_AGENT_SANDBOX": "off",
            "HIVE_MAX_WORKERS": str(slots),
            "HIVE_RUNNER_SILENT_MINUTES": str(self.shape.silent_minutes),
            "HIVE_CREDITS": "on",
            **CLOCKS,
        }
        for k in range(math.ceil(slots / LANES_PER_KEY)):
            env["HIVE_WORKER_KEY" + ("" if k == 0 else f"_{k + 1}")] = f"sk-chaos-{k:04d}"
        if role == "queen":
            env["HIVE_QUEEN_BEES_RUN_ELSEWHERE"] = "on"
        if self.loop:
            env["HIVE_PUBLISH"] = "push"
            env["HIVE_REVIEWER_AGENT"] = f"command:sh {self.ctl / 'reviewer.sh'} {self.ctl}"
            env["HIVE_CHECK_CI"] = loop.check_red_once(str(self.ctl))
            env["HIVE_REVIEW_MAX_SECONDS"] = str(REVIEW_MAX_SECONDS)
            # a killed Queen's publish job is taken again after this, not a minute
            env["HIVE_JOB_CLAIM_SECONDS"] = str(JOB_CLAIM_SECONDS)
        if self.forge is not None:
            env.update(self.forge.env(role))
        return env

    def _start(self, prefix: str, role: str) -> Serve:
        self._made += 1
        name = f"{prefix}-{self._made}"
        return start_serve(name, self.env(name, role), cwd=self.root, log_dir=self.root / "logs")

    def start_queen(self) -> Serve:
        with interrupt.held():  # started and noted, or neither: the ending stops it
            self.queen = self._start(QUEEN, "queen")
        return self.queen

    def start_runner(self, slot: int) -> Serve:
        with interrupt.held():
            self.runners[slot] = self._start(f"runner{slot}", "runner")
        return self.runners[slot]

    def replace_exited(self) -> None:
        """Replace each live process that exited by itself (a restart policy would);
        each is noted in `unasked`."""
        gone = [] if self.queen is None or self.queen.exit_code() is None else [self.queen]
        if gone:
            self.start_queen()
        for slot, serve in sorted(self.runners.items()):
            if serve.exit_code() is not None:
                gone.append(serve)
                self.start_runner(slot)
        for serve in gone:
            last = (serve.tail(1) or "(no output)").strip()
            self.unasked.append((serve.name, serve.exit_code() or 0, last))
            self.killed.append(serve)  # nothing more to ask of it; swept at the end

    def live(self) -> list[Serve]:
        """The Queen and the runners the slots hold now."""
        found = [self.queen] if self.queen is not None else []
        return found + [self.runners[slot] for slot in sorted(self.runners)]

    def dwell_bounds(self) -> dict[str, float]:
        """How long an issue may stay in each bounded place in this run: its clocks
        (a turn's longest, a reap after the silent window, three failed reviews and their
        pauses, a lost publish job made again, a killed Queen's claim running out), twice
        where a fault may strike twice; then DWELL_SLACK_SECONDS, and DWELL_STARTS times
        what a start of the swarm took on this machine (`serve_seconds`): a stay may
        live through a Queen replaced, the store restarted and a runner replaced, each
        about a start. A stuck issue sits until the run gives up on it, longer still."""
        turn = self.shape.turn_ticks[1] * TICK_SECONDS
        silent = self.shape.silent_minutes * 60
        reviews = 3 * REVIEW_MAX_SECONDS + (1 + 2 + 4)
        publish = LOST_JOB_SECONDS + 2 * JOB_CLAIM_SECONDS
        slack = DWELL_SLACK_SECONDS + DWELL_STARTS * self.serve_seconds
        return {
            dwell.QUEUED_PLACE: 2 * (turn + silent) + slack,  # the slot a turn frees
            dwell.RUNNING_PLACE: 2 * (turn + silent) + slack,
            dwell.REVIEW_PLACE: reviews + slack,
            dwell.PUBLISH_PLACE: publish + slack,
        }

    def remove_server(self) -> None:
        """Stop the daemon and the server, and remove its data (safe when neither
        started)."""
        if self.daemon is not None:
            self.daemon.__exit__(None, None, None)
            self.daemon = None
        if self.pgbase is not None:
            embedded.stop(self.pgdata)
            shutil.rmtree(self.pgbase, ignore_errors=True)

    def every_serve(self) -> list[Serve]:
        return [*self.live(), *self.signalled, *self.killed]

    def workdir(self, serve: Serve) -> Path:
        return self.procs / serve.name


def issue_file(n: int) -> str:
    return f"files/f{n}.txt"


def _git_config(repo: Path, name: str, value: str) -> None:
    env = git_environment(os.environ) | {"HOME": str(repo)}
    subprocess.run(
        ["git", "config", name, value], cwd=repo, env=env, check=True, capture_output=True
    )
