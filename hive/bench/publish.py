"""publish: issue -> merged for the demo flow, and what the hive adds to the bee's turn.

Real `hive serve` processes on a scratch database (hive/bench/processes.py): a Queen that
queues (elsewhere mode), judges with the demo reviewer and publishes with one check
(`HIVE_CHECK_OK=true`), and two runners with the demo agent, on the demo's clocks
(`--tick`). Each of `--issues` issues writes a file of its own (``write `files/fN.txt` ``,
no sleep) under one criterion in the demo reviewer's form. `--in-flight` issues (2, one
per runner) are open at once and the next is added as one merges, so an issue waits for
the hive, not for a free runner.

From the store, per merged issue (its last attempt), in seconds:

- `issue_to_merged`: the issue's creation to its merge's record;
- `pickup`: creation to the order (the Queen's next round: her tick, or sooner when
  something else wakes her, such as the previous issue's merge);
- `start`: the order to the turn's start (claim, worktree, the agent's start);
- `turn`: the bee's turn, its ending included; `ending` is the part after the turn's last
  transcript line (salvage, bundle, the row's end);
- `review`: the turn's end to the verdict (the reviewer process included);
- `publish`: the verdict to the merge's record (the publish job, its checks included),
  in three parts: `publish_checks` to the last check's end, `publish_push` to the push's
  end, `publish_close` to the record;
- `checks`: the checks' own seconds (queen_check.seconds).

The reviewer's process time is on no row: after the flow, with the processes still up,
this process runs the demo agent (in a repository of its own), the demo reviewer
(ReviewTurn, on a tree that meets the criterion) and the bare check (CheckTurn)
`--issues` times each, and reports their medians (`*_process_p50_s`).

`hive_own` = issue_to_merged - turn - checks - the reviewer's median process time: what
the hive itself spends per issue outside the agent, reviewer and check processes (goal:
under HIVE_OWN_GOAL_SECONDS). `overhead_ratio` = (review + publish) / turn, at their
medians: what review, checks and publish add beside the bee's own turn.

Wall time on a loaded machine moves with the load; the CPU the hive's processes spent
(user + system, their own, not their children's: the agents, reviewers and checks) does
much less: `queen_cpu_per_issue_s` and `runners_cpu_per_issue_s` (the two summed), from
the flow's start to its last merge, per merged issue. `load_start` and `load_end` are the
machine's one-minute load average at the two ends.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from hive import demo_data
from hive.agents.base import FINISHED, TurnContext
from hive.agents.checks import CheckTurn
from hive.agents.review import ReviewTurn, review_brief
from hive.agents.start import start_turn
from hive.bench import procstat
from hive.bench.arguments import seconds, whole
from hive.bench.processes import FILES, START_SECONDS, LocalHive, local_hive
from hive.errors import HiveError
from hive.settings import Settings
from hive.store import issues, reports
from hive.store.db import dicts
from hive.store.issues import NewIssue

HIVE_OWN_GOAL_SECONDS = 0.5  # issue 28: the hive's own time per issue, outside processes
MERGE_WAIT_SECONDS = 120.0  # for one of the open issues to merge, on a loaded machine
SIDE_TURN_SECONDS = 60.0  # the bound of one side-by-side turn
CHECK_NAME, CHECK_COMMAND = "OK", "true"
DEMO_CLOCKS = {"HIVE_RUNNER_SECONDS": "0.5"}  # `hive demo`'s; the tick is --tick


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--issues", type=whole(1, FILES), default=20, help=f"issues to merge (20, at most {FILES})"
    )
    parser.add_argument(
        "--in-flight", type=whole(1, FILES), default=2, help="issues open at once (2)"
    )
    parser.add_argument(
        "--tick", type=seconds(0.1, 60), default=1.0, help="HIVE_QUEEN_TICK_SECONDS (1, the demo's)"
    )
    parser.add_argument("--keep", action="store_true", help="keep the directory and its logs")


@dataclass(frozen=True)
class Times:
    """One merged issue's parts, in seconds (see the module docstring)."""

    attempt: int
    checks_run: int
    issue_to_merged: float
    pickup: float
    start: float
    turn: float
    ending: float
    review: float
    publish: float
    publish_checks: float
    publish_push: float
    publish_close: float
    checks: float


@dataclass(frozen=True)
class Spent:
    """CPU seconds the Queen and the runners (summed) spent over the flow, and the load
    average at its start and end."""

    queen_cpu: float
    runners_cpu: float
    load_start: float
    load_end: float


@dataclass(frozen=True)
class Processes:
    """The side-by-side medians: each process alone, in seconds."""

    agent: float
    reviewer: float
    check: float


def run(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    env = {"HIVE_AGENT": "demo", "HIVE_QUEEN_TICK_SECONDS": f"{args.tick:g}", **DEMO_CLOCKS}
    with local_hive(settings, keep=args.keep) as hive:
        hive.queen(**env, HIVE_REVIEWER_AGENT="demo", **{f"HIVE_CHECK_{CHECK_NAME}": CHECK_COMMAND})
        names = [hive.start(f"runner-{i}", "runner", **env).name for i in (1, 2)]
        hive.wait(lambda: all(map(hive.registered, names)), START_SECONDS, "the runners up")
        hive.wait(lambda: reports.latest(hive.db, 1), START_SECONDS, "the Queen's first round")
        pids = [serve.pid for serve in hive.serves]
        load_start, cpu_start = os.getloadavg()[0], [procstat.own_cpu_seconds(p) for p in pids]
        _feed(hive, args.issues, args.in_flight)
        cpu = [procstat.own_cpu_seconds(p) - c for p, c in zip(pids, cpu_start, strict=True)]
        spent = Spent(cpu[0], sum(cpu[1:]), load_start, os.getloadavg()[0])
        times = [times_of(row) for row in dicts(hive.db, "bench_publish_times")]
        side = range(1, args.issues + 1)
        alone = Processes(
            agent=statistics.median([_agent_seconds(hive.root, n) for n in side]),
            reviewer=statistics.median([_review_seconds(hive.root, n) for n in side]),
            check=statistics.median([_check_seconds(hive.root, n) for n in side]),
        )
    return report(args, times, alone, spent)


def report(
    args: argparse.Namespace, times: list[Times], alone: Processes, spent: Spent
) -> dict[str, Any]:
    """The figures: each part's p50, p90 and p99, the side-by-side medians, the ratios,
    the CPU spent per issue."""
    result: dict[str, Any] = {
        "issues": args.issues,
        "in_flight": args.in_flight,
        "tick_s": args.tick,
        "merged": len(times),
        "sent_back": sum(1 for t in times if t.attempt > 1),
        "checks_run": sum(t.checks_run for t in times),
    }
    parts = [
        "issue_to_merged",
        "pickup",
        "start",
        "turn",
        "ending",
        "review",
        "publish",
        "publish_checks",
        "publish_push",
        "publish_close",
        "checks",
    ]
    series = {name: [getattr(t, name) for t in times] for name in parts}
    series["review_and_publish"] = [t.review + t.publish for t in times]
    series["hive_own"] = [t.issue_to_merged - t.turn - t.checks - alone.reviewer for t in times]
    for name, values in series.items():
        result[f"{name}_p50_s"] = statistics.median(values)
        result[f"{name}_p90_s"] = percentile(values, 90)
        result[f"{name}_p99_s"] = percentile(values, 99)
    result["agent_process_p50_s"] = alone.agent
    result["reviewer_process_p50_s"] = alone.reviewer
    result["check_process_p50_s"] = alone.check
    result["hive_own_goal_s"] = HIVE_OWN_GOAL_SECONDS
    result["hive_own_ratio"] = result["hive_own_p50_s"] / HIVE_OWN_GOAL_SECONDS
    result["overhead_ratio"] = result["review_and_publish_p50_s"] / result["turn_p50_s"]
    merged = max(1, len(times))
    result["queen_cpu_per_issue_s"] = spent.queen_cpu / merged
    result["runners_cpu_per_issue_s"] = spent.runners_cpu / merged
    result["load_start"], result["load_end"] = spent.load_start, spent.load_end
    return result


def _feed(hive: LocalHive, count: int, in_flight: int) -> None:
    """Add the issues, `in_flight` open at a time, until every one is merged."""
    waiting = list(range(1, count + 1))
    open_ones: set[int] = set()
    while waiting or open_ones:
        while waiting and len(open_ones) < in_flight:
            n = waiting.pop(0)
            issues.upsert(hive.db, n, _issue(n))
            open_ones.add(n)
        merged = hive.wait(
            lambda: {m for m in open_ones if _merged(hive, m)} or None,
            MERGE_WAIT_SECONDS,
            f"one of issues {sorted(open_ones)} merged",
        )
        open_ones.difference_update(merged)


def _merged(hive: LocalHive, n: int) -> bool:
    order = hive.order(n)
    return order is not None and order.merged_sha is not None


def _path(n: int) -> str:
    return f"files/f{n}.txt"


def _text(n: int) -> str:
    return f"issue {n}, written by the demo agent"


def _issue(n: int) -> NewIssue:
    criterion = f"file `{_path(n)}` contains `{_text(n)}`"
    body = f"Write issue {n}'s line.\n\nwrite `{_path(n)}`: {_text(n)}\n"
    return NewIssue(
        title=f"bench publish {n}", body=body, boundary=(_path(n),), criteria=(criterion,)
    )


def times_of(row: dict[str, Any]) -> Times:
    """An issue's parts from its row of `bench_publish_times`."""

    def span(start: str, end: str) -> float:
        began: datetime | None = row[start]
        ended: datetime | None = row[end]
        if began is None or ended is None:
            missing = start if began is None else end
            raise HiveError(f"bench: issue {row['issue']} merged with no {missing}")
        return (ended - began).total_seconds()

    return Times(
        attempt=row["attempt"],
        checks_run=row["checks"],
        issue_to_merged=span("created_at", "merged_at"),
        pickup=span("created_at", "queued_at"),
        start=span("queued_at", "dispatched_at"),
        turn=span("dispatched_at", "finished_at"),
        ending=span("turn_last_line_at", "finished_at"),
        review=span("finished_at", "reviewed_at"),
        publish=span("reviewed_at", "merged_at"),
        publish_checks=span("reviewed_at", "checked_at"),
        publish_push=span("checked_at", "pushed_at"),
        publish_close=span("pushed_at", "merged_at"),
        checks=float(row["check_seconds"]),
    )


def _agent_seconds(root: Path, n: int) -> float:
    """The demo agent's process time on issue n, in a repository of its own."""
    issue = _issue(n)
    repo = root / "side" / f"agent-{n}"
    demo_data.make_repository(repo, {_path(n): "before\n"})
    ctx = TurnContext(
        issue=n,
        title=issue.title,
        body=issue.body,
        branch=demo_data.BASE,
        boundary=issue.boundary,
        brief="",
        worktree=repo,
        turn_max_seconds=SIDE_TURN_SECONDS,
    )
    turn = start_turn("demo", ctx)
    turn.wait()
    turn.transcript.close()
    ending = turn.ending
    if ending is None or ending.outcome is not FINISHED:
        raise HiveError(f"bench: the side-by-side demo agent did not finish #{n}: {ending}")
    return ending.seconds


def _review_seconds(root: Path, n: int) -> float:
    """The demo reviewer's process time on a tree that meets issue n's criterion."""
    issue = _issue(n)
    tree = root / "side" / f"review-{n}"
    (tree / "files").mkdir(parents=True)
    (tree / _path(n)).write_text(_text(n) + "\n")
    brief = review_brief(n, issue.title, issue.body, issue.boundary, issue.criteria)
    turn = ReviewTurn(
        "demo",
        issue=n,
        title=issue.title,
        brief=brief,
        boundary=issue.boundary,
        worktree=tree,
        bound_seconds=SIDE_TURN_SECONDS,
    )
    turn.start()
    done = turn.wait()
    if not done.complete or "HIVE-CRITERION: 1 met" not in done.lines:
        raise HiveError(f"bench: the side-by-side demo reviewer did not judge #{n} met: {done}")
    return done.ending.seconds


def _check_seconds(root: Path, n: int) -> float:
    """The bare check's process time, as queen_check.seconds records it."""
    tree = root / "side" / f"check-{n}"
    tree.mkdir(parents=True)
    check = CheckTurn(CHECK_NAME, CHECK_COMMAND, tree, issue=n, timeout_seconds=SIDE_TURN_SECONDS)
    ran = check.run()
    if not ran.passed:
        raise HiveError(f"bench: the side-by-side check `{CHECK_COMMAND}` did not pass: {ran}")
    return ran.seconds


def percentile(values: list[float], pct: float) -> float:
    """The nearest-rank percentile of `values` (NaN when there are none)."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[max(0, math.ceil(pct / 100 * len(ordered)) - 1)]
